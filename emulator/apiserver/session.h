// Session: one HTTP(S) connection (private to emulator/apiserver). Reads a request with body
// and header limits, calls Router::Route, writes the response; a response with a stream is
// sent chunked, woken by the stream's notify (posted to the connection's strand) or polled,
// and ended by the stream, its timeout, a stalled client or a disconnect; a response with an
// upgrade hands the connection to a WebSocket session (session_ws.h). Everything a session
// does runs on its strand; only Router and the counters in ServerShared are shared.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <set>

#include "emulator/apiserver/apiserver.h"
#include "emulator/apiserver/router.h"

namespace pjemu::apiserver {

// Wakes a session from a Store writer's thread; disabled before the io_context goes away.
class Waker {
 public:
  explicit Waker(std::function<void()> post) : post_(std::move(post)) {}
  void Wake() {
    std::lock_guard<std::mutex> lock(mu_);
    if (post_) post_();
  }
  void Disable() {
    std::lock_guard<std::mutex> lock(mu_);
    post_ = nullptr;
  }

 private:
  std::mutex mu_;
  std::function<void()> post_;
};

// What all sessions of one server share.
struct ServerShared {
  ServerShared(store::Store& store, api::PodLogs* logs, RouterOptions router_options,
               ApiServerLimits l)
      : router(store, logs, std::move(router_options)), limits(l) {}
  Router router;
  ApiServerLimits limits;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> watches{0};
  std::shared_ptr<boost::asio::ssl::context> ssl;  // null = plain http

  // Wakers are registered so that Stop can disable them all before the io_context ends.
  std::shared_ptr<Waker> NewWaker(std::function<void()> post);
  void ReleaseWaker(const std::shared_ptr<Waker>& waker);
  void DisableWakers();  // ApiServer::Stop

 private:
  std::mutex mu_;
  std::set<std::shared_ptr<Waker>> wakers_;
  bool stopped_ = false;
};

// Takes over an accepted socket (counted in shared->connections) and serves it.
void StartSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerShared> shared);

}  // namespace pjemu::apiserver
