// Session<Stream> over plain TCP (http).
#include "emulator/apiserver/session_impl.h"

namespace pjemu::apiserver::session_impl {

void StartTcp(tcp::socket socket, std::shared_ptr<ServerShared> shared) {
  Start<beast::tcp_stream>(std::move(shared), std::move(socket));
}

}  // namespace pjemu::apiserver::session_impl
