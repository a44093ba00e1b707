// HttpTransport (private to emulator/client): one connection to an API server, over plain TCP
// for http:// servers or TLS for https:// ones (Boost.Beast over OpenSSL), so that HttpClient's
// exchanges and streams are written once for both. TLS verifies the server's certificate
// against the CA the options carry (the kubeconfig's certificate-authority-data), else the
// system's roots, and checks the host name or IP (RFC 2818), unless insecure_skip_tls_verify;
// it offers the options' client certificate and key when they are set.
// Thread safety: one transport per call, used by one thread; Shutdown() may come from another.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <optional>
#include <string>

#include "emulator/client/http_client.h"

namespace pjemu::client::internal {

struct Endpoint {
  bool tls = false;
  std::string host;
  std::string port;
  std::string prefix;  // path prefix of the server URL, without trailing '/'
};

// "http://h:p/prefix", "https://h[:443]", "h:p" (http). kBadRequest for anything else.
Result<Endpoint> ParseServer(const std::string& server);

class HttpTransport {
 public:
  // Connects (and handshakes for https) within timeout; after that no deadline applies when
  // streaming is true, otherwise timeout bounds every later read and write too.
  static Result<std::unique_ptr<HttpTransport>> Open(const HttpClientOptions& options,
                                                     const Endpoint& endpoint, Duration timeout,
                                                     bool streaming);
  ~HttpTransport();

  // f(stream) with the plain or the TLS stream; both are Beast SyncStreams.
  template <typename F>
  auto With(F&& f) {
    return tls_ ? f(*tls_) : f(*plain_);
  }
  int native_handle();
  // Shuts the TCP connection down (no TLS close_notify).
  void Close();

 private:
  HttpTransport() = default;
  boost::asio::io_context ioc_;
  std::unique_ptr<boost::asio::ssl::context> ssl_ctx_;
  std::optional<boost::beast::tcp_stream> plain_;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
};

}  // namespace pjemu::client::internal
