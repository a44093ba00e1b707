#include "emulator/client/http_transport.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>

namespace pjemu::client::internal {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

Status Unreachable(const std::string& server, const std::string& what) {
  return Status(Code::kUnavailable, "the connection to the server " + server +
                                        " was refused or failed: " + what +
                                        " - is `pjemu serve` running?");
}

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// The kubeconfig's client certificate and key, offered when the server asks for one.
Status UseClientCertificate(const HttpClientOptions& options, ssl::context& ctx) {
  if (options.client_certificate_pem.empty() && options.client_key_pem.empty()) {
    return Status::Ok();
  }
  if (options.client_certificate_pem.empty() || options.client_key_pem.empty()) {
    return Status(Code::kBadRequest, "server " + options.server +
                                         ": a client certificate needs both the certificate "
                                         "and its key (client-certificate-data, client-key-data)");
  }
  beast::error_code ec;
  ctx.use_certificate_chain(net::buffer(options.client_certificate_pem), ec);
  if (ec) {
    return Status(Code::kBadRequest, "server " + options.server +
                                         ": the client certificate is not a PEM certificate: " +
                                         ec.message());
  }
  ctx.use_private_key(net::buffer(options.client_key_pem), ssl::context::pem, ec);
  if (ec) {
    return Status(Code::kBadRequest, "server " + options.server +
                                         ": the client key is not a PEM key matching the "
                                         "certificate: " + ec.message());
  }
  return Status::Ok();
}

}  // namespace

Result<Endpoint> ParseServer(const std::string& server) {
  std::string_view s = server;
  Endpoint ep;
  if (s.rfind("https://", 0) == 0) {
    ep.tls = true;
    s.remove_prefix(8);
  } else if (s.rfind("http://", 0) == 0) {
    s.remove_prefix(7);
  } else if (s.find("://") != std::string_view::npos) {
    return Status(Code::kBadRequest, "server " + server + ": only http:// and https:// are spoken");
  }
  auto slash = s.find('/');
  std::string_view hostport = s.substr(0, slash);
  if (slash != std::string_view::npos) ep.prefix = std::string(s.substr(slash));
  while (!ep.prefix.empty() && ep.prefix.back() == '/') ep.prefix.pop_back();
  auto colon = hostport.rfind(':');
  auto bracket = hostport.rfind(']');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) {
    ep.host = std::string(hostport);
    ep.port = ep.tls ? "443" : "80";
  } else {
    ep.host = std::string(hostport.substr(0, colon));
    ep.port = std::string(hostport.substr(colon + 1));
  }
  if (ep.host.size() > 2 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty() || ep.port.empty()) {
    return Status(Code::kBadRequest, "invalid server address \"" + server + "\"");
  }
  return ep;
}

Result<std::unique_ptr<HttpTransport>> HttpTransport::Open(const HttpClientOptions& options,
                                                           const Endpoint& ep, Duration timeout,
                                                           bool streaming) {
  std::unique_ptr<HttpTransport> t(new HttpTransport());
  beast::error_code ec;
  tcp::resolver resolver(t->ioc_);
  auto results = resolver.resolve(ep.host, ep.port, ec);
  if (ec) return Unreachable(options.server, ec.message());
  if (!ep.tls) {
    t->plain_.emplace(t->ioc_);
    t->plain_->expires_after(timeout);
    t->plain_->connect(results, ec);
    if (ec) return Unreachable(options.server, ec.message());
    if (streaming) t->plain_->expires_never();
    return t;
  }
  t->ssl_ctx_ = std::make_unique<ssl::context>(ssl::context::tls_client);
  ssl::context& ctx = *t->ssl_ctx_;
  if (options.insecure_skip_tls_verify) {
    ctx.set_verify_mode(ssl::verify_none);
  } else {
    if (!options.ca_pem.empty()) {
      ctx.add_certificate_authority(net::buffer(options.ca_pem), ec);
      if (ec) {
        return Status(Code::kBadRequest,
                      "server " + options.server + ": the certificate authority data is not a "
                      "PEM certificate: " + ec.message());
      }
    } else {
      ctx.set_default_verify_paths(ec);
    }
    ctx.set_verify_mode(ssl::verify_peer);
  }
  RETURN_IF_ERROR(UseClientCertificate(options, ctx));
  t->tls_.emplace(t->ioc_, ctx);
  if (!options.insecure_skip_tls_verify) {
    t->tls_->set_verify_callback(ssl::host_name_verification(ep.host));
  }
  // SNI carries names only (RFC 6066), never an address.
  if (!IsIpAddress(ep.host)) SSL_set_tlsext_host_name(t->tls_->native_handle(), ep.host.c_str());
  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(*t->tls_);
  tcp_layer.expires_after(timeout);
  tcp_layer.connect(results, ec);
  if (ec) return Unreachable(options.server, ec.message());
  t->tls_->handshake(ssl::stream_base::client, ec);
  if (ec) {
    return Status(Code::kUnavailable, "the connection to the server " + options.server +
                                          " failed in the TLS handshake: " + ec.message() +
                                          " (is the kubeconfig's certificate-authority-data the "
                                          "server's certificate?)");
  }
  if (streaming) tcp_layer.expires_never();
  return t;
}

HttpTransport::~HttpTransport() = default;

int HttpTransport::native_handle() {
  return tls_ ? beast::get_lowest_layer(*tls_).socket().native_handle()
              : plain_->socket().native_handle();
}

void HttpTransport::Close() {
  beast::error_code ignored;
  // Without TLS close_notify: the exchange is complete or being abandoned, and the server reads
  // the TCP shutdown as the end of the connection either way.
  if (tls_) {
    beast::get_lowest_layer(*tls_).socket().shutdown(tcp::socket::shutdown_both, ignored);
  } else if (plain_) {
    plain_->socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
}

}  // namespace pjemu::client::internal
