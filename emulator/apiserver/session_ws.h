// WsSession<Stream> (private to emulator/apiserver): a connection the router upgraded to a
// WebSocket (HttpResponse::upgrade). It answers the handshake with the negotiated subprotocol,
// passes each client message to the ChannelHandler, and writes what the handler sends through
// its Outbox, in order; the handler's Close ends the connection with a normal closure once the
// Outbox is written. The client leaving, a failed write or ApiServer::Stop (its Waker is
// disabled) ends it too, and the handler is stopped. Keep-alive pings and a 30 s handshake
// limit are Beast's suggested server settings. The handler starts kWsStartDelay after the
// handshake: on a cluster the API server first connects to the kubelet, which takes at least
// that, and kubectl 1.30-1.32 drop output that arrives before their client has made its streams
// ("Unknown stream id 1, discarding message"), so a command that writes at once would lose its
// output under load. Everything runs on the connection's strand; the Outbox is the only part
// other threads touch.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <deque>

#include "emulator/apiserver/session.h"

namespace pjemu::apiserver::session_impl {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;

// What a handler sends, queued for the session. Send blocks while more than kMaxQueued bytes
// wait (a client that reads slowly slows the producer down) until the session takes them or
// the connection ends; Post queues without waiting; after the end, what it is given is dropped.
class Outbox final : public ChannelSink {
 public:
  static constexpr std::size_t kMaxQueued = 1 << 20;
  explicit Outbox(std::shared_ptr<Waker> waker) : waker_(std::move(waker)) {}
  void Send(std::string message, bool binary) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return dead_ || queued_ < kMaxQueued; });
      if (dead_ || closing_) return;
      queued_ += message.size();
      queue_.emplace_back(std::move(message), binary);
    }
    waker_->Wake();
  }
  void Post(std::string message, bool binary) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (dead_ || closing_) return;
      queued_ += message.size();
      queue_.emplace_back(std::move(message), binary);
    }
    waker_->Wake();
  }
  void Close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    waker_->Wake();
  }
  // The session's side: the next message, or nullopt (then *close says whether Close was
  // called).
  std::optional<std::pair<std::string, bool>> Take(bool* close) {
    std::lock_guard<std::mutex> lock(mu_);
    *close = closing_;
    if (queue_.empty()) return std::nullopt;
    auto out = std::move(queue_.front());
    queue_.pop_front();
    queued_ -= out.first.size();
    cv_.notify_all();
    return out;
  }
  void Kill() {
    std::lock_guard<std::mutex> lock(mu_);
    dead_ = true;
    queue_.clear();
    queued_ = 0;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<Waker> waker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, bool>> queue_;  // GUARDED_BY(mu_)
  std::size_t queued_ = 0;                          // GUARDED_BY(mu_)
  bool closing_ = false;                            // GUARDED_BY(mu_)
  bool dead_ = false;                               // GUARDED_BY(mu_)
};

// What every upgraded connection (WsSession, RawSession) holds: its handler, the Outbox the
// handler sends through, and the Waker that posts the session's writes. Begin starts the
// handler; End stops it, drops what is queued and lets the Waker go, then closes the socket.
struct UpgradeParts {
  std::shared_ptr<ChannelHandler> handler;
  std::shared_ptr<Outbox> outbox;
  std::shared_ptr<Waker> waker;

  void Begin(ServerShared& shared, std::function<void()> post_write) {
    waker = shared.NewWaker(std::move(post_write));
    outbox = std::make_shared<Outbox>(waker);
    handler->Start(outbox);
  }
  template <class Stream>
  void End(ServerShared& shared, Stream& stream) {
    if (outbox) outbox->Kill();
    if (handler) handler->Stop();
    if (waker) {
      waker->Disable();
      shared.ReleaseWaker(waker);
      waker.reset();
    }
    beast::error_code ec;
    beast::get_lowest_layer(stream).socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(stream).close();
  }
};

// A function that posts `Self::DoWrite` onto `executor` while the session lives.
template <class Self, class Executor>
std::function<void()> PostWrite(std::weak_ptr<Self> weak, Executor executor) {
  return [weak, executor] {
    net::post(executor, [weak] {
      if (auto self = weak.lock()) self->DoWrite();
    });
  };
}

inline constexpr auto kWsStartDelay = std::chrono::milliseconds(50);

template <class Stream>
class WsSession : public std::enable_shared_from_this<WsSession<Stream>> {
 public:
  // Takes over the connection (and its count in shared->connections).
  WsSession(Stream stream, std::shared_ptr<ServerShared> shared, HttpResponse response)
      : ws_(std::move(stream)),
        shared_(std::move(shared)),
        subprotocol_(std::move(response.subprotocol)),
        start_timer_(ws_.get_executor()) {
    parts_.handler = std::move(response.upgrade);
  }

  ~WsSession() {
    Finish();
    --shared_->connections;
  }

  void Run(http::request<http::string_body> request) {
    beast::get_lowest_layer(ws_).expires_never();  // the websocket's own timeouts from here
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(
        websocket::stream_base::decorator([protocol = subprotocol_](websocket::response_type& res) {
          if (!protocol.empty()) res.set(http::field::sec_websocket_protocol, protocol);
        }));
    ws_.read_message_max(shared_->limits.max_body_bytes);
    ws_.async_accept(request,
                     beast::bind_front_handler(&WsSession::OnAccept, this->shared_from_this()));
  }

 private:
  void OnAccept(beast::error_code ec) {
    if (ec) return Finish();
    start_timer_.expires_after(kWsStartDelay);
    start_timer_.async_wait([self = this->shared_from_this()](beast::error_code) {
      if (self->finished_) return;
      self->parts_.Begin(*self->shared_,
                         PostWrite(self->weak_from_this(), self->ws_.get_executor()));
      self->DoRead();
    });
  }

  void DoRead() {
    ws_.async_read(in_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->Finish();
      std::string message = beast::buffers_to_string(self->in_.data());
      self->in_.consume(self->in_.size());
      if (!self->finished_) {
        self->parts_.handler->OnMessage(std::move(message), self->ws_.got_binary());
      }
      self->DoRead();
    });
  }

  template <class Self, class Executor>
  friend std::function<void()> PostWrite(std::weak_ptr<Self>, Executor);

  void DoWrite() {
    if (finished_ || writing_ || closing_) return;
    bool close = false;
    auto next = parts_.outbox->Take(&close);
    if (!next) {
      if (close) DoClose();
      return;
    }
    out_ = std::move(next->first);
    ws_.binary(next->second);
    writing_ = true;
    ws_.async_write(net::buffer(out_),
                    [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) return self->Finish();
                      self->DoWrite();
                    });
  }

  void DoClose() {
    closing_ = true;
    ws_.async_close(websocket::close_code::normal,
                    [self = this->shared_from_this()](beast::error_code) { self->Finish(); });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    parts_.End(*shared_, ws_);
  }

  websocket::stream<Stream> ws_;
  std::shared_ptr<ServerShared> shared_;
  std::string subprotocol_;
  net::steady_timer start_timer_;
  UpgradeParts parts_;
  beast::flat_buffer in_;
  std::string out_;
  bool writing_ = false;
  bool closing_ = false;
  bool finished_ = false;
};

}  // namespace pjemu::apiserver::session_impl
