#include "emulator/apiserver/session.h"

#include "emulator/apiserver/session_impl.h"

namespace pjemu::apiserver {

std::shared_ptr<Waker> ServerShared::NewWaker(std::function<void()> post) {
  auto waker = std::make_shared<Waker>(std::move(post));
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) {
    waker->Disable();
  } else {
    wakers_.insert(waker);
  }
  return waker;
}

void ServerShared::ReleaseWaker(const std::shared_ptr<Waker>& waker) {
  std::lock_guard<std::mutex> lock(mu_);
  wakers_.erase(waker);
}

void ServerShared::DisableWakers() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  for (const auto& waker : wakers_) waker->Disable();
  wakers_.clear();
}

void StartSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerShared> shared) {
  using session_impl::AnyStream;
  auto ssl = shared->ssl;  // kept alive by `shared`, which the session holds
  session_impl::Start(std::move(shared), ssl ? AnyStream::Tls(std::move(socket), *ssl)
                                             : AnyStream::Tcp(std::move(socket)));
}

}  // namespace pjemu::apiserver
