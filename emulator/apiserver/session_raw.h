// RawSession<Stream> (private to emulator/apiserver): a connection the router upgraded to a
// protocol of raw bytes (HttpResponse::UpgradeKind::kRaw: SPDY/3.1). It answers 101 Switching
// Protocols with the response's headers, then passes what the client sends to the
// ChannelHandler as it arrives (bytes already read past the request first), and writes what
// the handler sends, through an Outbox, in order. The handler's Close ends the connection once
// the Outbox is written; the client leaving, a failed write or ApiServer::Stop end it too, and
// the handler is stopped. Everything runs on the connection's strand; the Outbox is the only
// part other threads touch.
#pragma once

#include "emulator/apiserver/session_ws.h"

namespace pjemu::apiserver::session_impl {

template <class Stream>
class RawSession : public std::enable_shared_from_this<RawSession<Stream>> {
 public:
  // Takes over the connection (and its count in shared->connections); `early` holds bytes the
  // client sent after its request, already read.
  RawSession(Stream stream, std::shared_ptr<ServerShared> shared, HttpResponse response,
             std::string early)
      : stream_(std::move(stream)),
        shared_(std::move(shared)),
        headers_(std::move(response.headers)),
        early_(std::move(early)) {
    parts_.handler = std::move(response.upgrade);
  }

  ~RawSession() {
    Finish();
    --shared_->connections;
  }

  void Run(unsigned version) {
    beast::get_lowest_layer(stream_).expires_never();
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::switching_protocols,
                                                                  version);
    for (const auto& [name, value] : headers_) res->insert(name, value);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
                        self->OnSwitched(ec);
                      });
  }

 private:
  void OnSwitched(beast::error_code ec) {
    if (ec) return Finish();
    parts_.Begin(*shared_, PostWrite(this->weak_from_this(), stream_.get_executor()));
    if (!early_.empty()) parts_.handler->OnMessage(std::move(early_), true);
    DoRead();
  }

  void DoRead() {
    stream_.async_read_some(
        net::buffer(in_), [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
          if (ec) return self->Finish();
          if (!self->finished_) {
            self->parts_.handler->OnMessage(std::string(self->in_.data(), n), true);
          }
          self->DoRead();
        });
  }

  template <class Self, class Executor>
  friend std::function<void()> PostWrite(std::weak_ptr<Self>, Executor);

  void DoWrite() {
    if (finished_ || writing_) return;
    bool close = false;
    auto next = parts_.outbox->Take(&close);
    if (!next) {
      if (close) Finish();
      return;
    }
    out_ = std::move(next->first);
    writing_ = true;
    net::async_write(stream_, net::buffer(out_),
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (ec) return self->Finish();
                       self->DoWrite();
                     });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    parts_.End(*shared_, stream_);
  }

  Stream stream_;
  std::shared_ptr<ServerShared> shared_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string early_;
  UpgradeParts parts_;
  std::array<char, 32 * 1024> in_{};
  std::string out_;
  bool writing_ = false;
  bool finished_ = false;
};

}  // namespace pjemu::apiserver::session_impl
