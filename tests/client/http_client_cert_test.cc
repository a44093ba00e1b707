// HttpClient's client-certificate authentication (a kubeconfig's client-certificate-data and
// client-key-data): against a one-shot TLS server on 127.0.0.1:0 that requires a client
// certificate signed by its CA, the client with the certificate gets through (the server sees its
// CN), the client without one fails the handshake, and malformed PEM is refused before
// connecting.
#include <openssl/x509.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <catch2/catch.hpp>
#include <thread>

#include "emulator/apiserver/tls.h"
#include "emulator/client/http_client.h"

namespace pjemu::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// Accepts one connection, requires a client certificate signed by ca, answers 200 with the
// certificate's CN as the body. The handshake's failure ends it quietly.
class OneShotTlsServer {
 public:
  OneShotTlsServer(const apiserver::TlsMaterial& ca, const apiserver::TlsMaterial& serving)
      : ctx_(ssl::context::tls_server), acceptor_(ioc_, {net::ip::make_address("127.0.0.1"), 0}) {
    ctx_.use_certificate_chain(net::buffer(serving.certificate_pem));
    ctx_.use_private_key(net::buffer(serving.private_key_pem), ssl::context::pem);
    ctx_.add_certificate_authority(net::buffer(ca.certificate_pem));
    ctx_.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneShotTlsServer() { thread_.join(); }
  std::string url() const {
    return "https://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }

 private:
  void Serve() {
    beast::error_code ec;
    tcp::socket socket(ioc_);
    acceptor_.accept(socket, ec);
    if (ec) return;
    beast::ssl_stream<tcp::socket> stream(std::move(socket), ctx_);
    stream.handshake(ssl::stream_base::server, ec);
    if (ec) return;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::read(stream, buffer, req, ec);
    if (ec) return;
    http::response<http::string_body> res{http::status::ok, 11};
    res.body() = PeerCommonName(stream);
    res.prepare_payload();
    http::write(stream, res, ec);
    stream.next_layer().shutdown(tcp::socket::shutdown_both, ec);
  }
  static std::string PeerCommonName(beast::ssl_stream<tcp::socket>& stream) {
    X509* cert = SSL_get_peer_certificate(stream.native_handle());
    if (cert == nullptr) return "";
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    X509_free(cert);
    return cn;
  }

  net::io_context ioc_;
  ssl::context ctx_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST_CASE("HttpClient authenticates with a client certificate", "[client][tls]") {
  auto ca = apiserver::GenerateCa();
  REQUIRE(ca.ok());
  auto serving = apiserver::IssueServingCertificate(*ca, "127.0.0.1");
  REQUIRE(serving.ok());
  auto admin = apiserver::IssueClientCertificate(*ca, "kubernetes-admin", "system:masters");
  REQUIRE(admin.ok());

  SECTION("with the certificate and its key the server sees the client's CN") {
    OneShotTlsServer server(*ca, *serving);
    HttpClientOptions o;
    o.server = server.url();
    o.ca_pem = ca->certificate_pem;
    o.client_certificate_pem = admin->certificate_pem;
    o.client_key_pem = admin->private_key_pem;
    auto reply = HttpClient(o).Request("GET", "/version");
    REQUIRE(reply.ok());
    CHECK(reply->status == 200);
    CHECK(reply->body == "kubernetes-admin");
  }
  SECTION("without one the handshake fails") {
    OneShotTlsServer server(*ca, *serving);
    HttpClientOptions o;
    o.server = server.url();
    o.ca_pem = ca->certificate_pem;
    auto reply = HttpClient(o).Request("GET", "/version");
    CHECK_FALSE(reply.ok());
  }
  SECTION("a certificate that is not PEM, or one without its key, is refused before connecting") {
    HttpClientOptions o;
    o.server = "https://127.0.0.1:1";
    o.ca_pem = ca->certificate_pem;
    o.client_certificate_pem = "not a certificate";
    o.client_key_pem = admin->private_key_pem;
    auto reply = HttpClient(o).Request("GET", "/version");
    REQUIRE_FALSE(reply.ok());
    CHECK(reply.status().code() == Code::kBadRequest);
    CHECK_THAT(reply.status().message(), Catch::Contains("client certificate is not a PEM"));
    o.client_certificate_pem = admin->certificate_pem;
    o.client_key_pem.clear();
    reply = HttpClient(o).Request("GET", "/version");
    REQUIRE_FALSE(reply.ok());
    CHECK_THAT(reply.status().message(), Catch::Contains("needs both the certificate and its key"));
  }
}

}  // namespace
}  // namespace pjemu::client
