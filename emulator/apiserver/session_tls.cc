// Session<Stream> over TLS (the server's ssl context in ServerShared).
#include "emulator/apiserver/session_impl.h"

namespace pjemu::apiserver::session_impl {

void StartTls(tcp::socket socket, std::shared_ptr<ServerShared> shared) {
  using SslStream = beast::ssl_stream<beast::tcp_stream>;
  auto ssl = shared->ssl;
  Start<SslStream>(std::move(shared), beast::tcp_stream(std::move(socket)), *ssl);
}

}  // namespace pjemu::apiserver::session_impl
