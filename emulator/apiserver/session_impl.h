// The connection state machine behind StartSession (private to emulator/apiserver): a
// template over the stream, instantiated once (session.cc), over AnyStream, which is plain TCP
// or TLS.
#pragma once

#include <algorithm>
#include <array>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <optional>

#include "emulator/apiserver/any_stream.h"
#include "emulator/apiserver/session.h"
#include "emulator/apiserver/session_raw.h"
#include "emulator/apiserver/session_ws.h"

namespace pjemu::apiserver::session_impl {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr auto kHandshakeTimeout = std::chrono::seconds(30);

// Stream: an asio AsyncStream whose lowest layer is a beast::tcp_stream, with async_start
// (TLS's handshake), as AnyStream.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, std::shared_ptr<ServerShared> shared)
      : stream_(std::move(stream)),
        shared_(std::move(shared)),
        poll_timer_(stream_.get_executor()),
        timeout_timer_(stream_.get_executor()),
        stall_timer_(stream_.get_executor()) {}

  ~Session() {
    StopSource();
    if (!handed_off_) --shared_->connections;
  }

  void Run() {
    Lowest().expires_after(kHandshakeTimeout);
    stream_.async_start(beast::bind_front_handler(&Session::OnStarted, this->shared_from_this()));
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void OnStarted(beast::error_code ec) {
    if (ec) return DoClose();
    DoRead();
  }

  // Three deadlines, as Go's http.Server under kube-apiserver: idle_timeout for the first byte
  // of a request, header_timeout for its line and headers, body_timeout for its body.
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(shared_->limits.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(shared_->limits.max_header_bytes, UINT32_MAX)));
    if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
    Lowest().expires_after(shared_->limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->DoClose();
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    Lowest().expires_after(shared_->limits.header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnHeader, this->shared_from_this()));
  }

  void OnHeader(beast::error_code ec, std::size_t n) {
    if (ec) return OnRead(ec, n);
    Lowest().expires_after(shared_->limits.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, this->shared_from_this()));
  }

  // True when the header limit was hit before the request line was complete: the URL is too
  // long. (The parser keeps the request line's target once it has read it, and consumes the
  // line's bytes from the buffer as it goes.)
  bool RequestLineTooLong() const { return parser_->get().target().empty(); }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      return Send(ErrorResponse(Status(Code::kRequestEntityTooLarge,
                                       "Request entity too large: limit is " +
                                           std::to_string(shared_->limits.max_body_bytes))),
                  false, 11);
    }
    if (ec == http::error::header_limit) {
      HttpResponse response;
      response.content_type = "text/plain; charset=utf-8";
      if (RequestLineTooLong()) {
        response.status = 414;
        response.body = "414 URI Too Long";
      } else {
        response.status = 431;
        response.body = "431 Request Header Fields Too Large";
      }
      return Send(std::move(response), false, 11);
    }
    if (ec) return DoClose();
    auto message = parser_->release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // A repeated header is one list, its values joined in order (RFC 9110, 5.3): SPDY
      // clients offer each protocol version on a line of its own.
      auto [it, added] = request.headers.emplace(std::move(name), std::string(field.value()));
      if (!added) it->second += ", " + std::string(field.value());
    }
    request.body = std::move(message.body());
    HttpResponse response = shared_->router.Route(request);
    if (response.upgrade) return Upgrade(std::move(response), std::move(message));
    bool head = request.method == "HEAD";
    if (response.stream && !head) return StartStream(std::move(response), message.version());
    if (response.stream) response.stream->Stop();
    Send(std::move(response), message.keep_alive(), message.version(), head);
  }

  // The router accepted an upgrade: a WsSession or a RawSession takes the connection over.
  void Upgrade(HttpResponse response, http::request<http::string_body> message) {
    handed_off_ = true;
    closed_ = true;  // nothing of this session touches the stream any more
    if (response.upgrade_kind == HttpResponse::UpgradeKind::kRaw) {
      std::string early = beast::buffers_to_string(buffer_.data());
      auto raw = std::make_shared<RawSession<Stream>>(std::move(stream_), shared_,
                                                      std::move(response), std::move(early));
      return raw->Run(message.version());
    }
    auto ws = std::make_shared<WsSession<Stream>>(std::move(stream_), shared_, std::move(response));
    ws->Run(std::move(message));
  }

  void Send(HttpResponse response, bool keep_alive, unsigned version, bool head = false) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version);
    res->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) res->insert(name, value);
    res->keep_alive(keep_alive);
    res->body() = std::move(response.body);
    res->prepare_payload();
    if (head) {  // the headers of a GET, without its body
      std::size_t length = res->body().size();
      res->body().clear();
      res->content_length(length);
    }
    http::async_write(
        stream_, *res,
        [self = this->shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
          if (ec || !keep_alive) return self->DoClose();
          self->DoRead();
        });
  }

  void StartStream(HttpResponse response, unsigned version) {
    if (response.stream->IsWatch()) {
      if (shared_->watches.load() >= shared_->limits.max_watches) {
        response.stream->Stop();
        return Send(ErrorResponse(Status(Code::kTooManyRequests,
                                         "too many watches open on this server; try again later",
                                         Json{{"retryAfterSeconds", 1}})),
                    false, version);
      }
      ++shared_->watches;
      counted_watch_ = true;
    }
    source_ = std::move(response.stream);
    Lowest().expires_never();
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::ok, version);
    res->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) res->insert(name, value);
    res->keep_alive(false);
    res->chunked(true);
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    writing_ = true;
    ArmStall();
    http::async_write_header(stream_, *serializer,
                             [self = this->shared_from_this(), res, serializer](
                                 beast::error_code ec, std::size_t) { self->OnStreamHeader(ec); });
  }

  void OnStreamHeader(beast::error_code ec) {
    writing_ = false;
    stall_timer_.cancel();
    if (ec) return DoClose();
    std::weak_ptr<Session> weak = this->shared_from_this();
    auto executor = stream_.get_executor();
    waker_ = shared_->NewWaker([weak, executor] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->DoPump();
      });
    });
    std::weak_ptr<Waker> weak_waker = waker_;
    polling_ = !source_->SetNotify([weak_waker] {
      if (auto waker = weak_waker.lock()) waker->Wake();
    });
    if (auto timeout = source_->Timeout()) {
      timeout_timer_.expires_after(*timeout);
      timeout_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
        if (ec) return;
        self->ended_ = true;
        if (!self->writing_) self->WriteLast();
      });
    }
    WatchClient();
    DoPump();
  }

  // Reads (and ignores) what the client sends while streaming, to notice when it leaves.
  void WatchClient() {
    stream_.async_read_some(net::buffer(client_buf_),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->DoClose();
                              self->WatchClient();
                            });
  }

  void DoPump() {
    if (closed_ || writing_ || !source_) return;
    if (ended_) return WriteLast();
    std::string out;
    if (!source_->Poll(&out)) ended_ = true;
    if (out.empty()) {
      if (ended_) return WriteLast();
      if (polling_) SchedulePoll();
      return;
    }
    chunk_ = std::move(out);
    writing_ = true;
    ArmStall();
    net::async_write(stream_, http::make_chunk(net::buffer(chunk_)),
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->stall_timer_.cancel();
                       if (ec) return self->DoClose();
                       self->DoPump();
                     });
  }

  void SchedulePoll() {
    poll_timer_.expires_after(source_->PollInterval());
    poll_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (!ec) self->DoPump();
    });
  }

  void WriteLast() {
    if (closed_ || writing_ || finishing_) return;
    finishing_ = true;
    writing_ = true;
    ArmStall();
    net::async_write(stream_, http::make_chunk_last(),
                     [self = this->shared_from_this()](beast::error_code, std::size_t) {
                       self->writing_ = false;
                       self->DoClose();
                     });
  }

  // A client that stops reading must not hold the stream forever.
  void ArmStall() {
    stall_timer_.expires_after(shared_->limits.write_stall_timeout);
    stall_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (!ec && self->writing_) self->DoClose();
    });
  }

  void StopSource() {
    if (waker_) {
      waker_->Disable();
      shared_->ReleaseWaker(waker_);
      waker_.reset();
    }
    if (source_) {
      source_->Stop();
      source_.reset();
    }
    if (counted_watch_) {
      --shared_->watches;
      counted_watch_ = false;
    }
  }

  void DoClose() {
    if (closed_) return;
    closed_ = true;
    poll_timer_.cancel();
    timeout_timer_.cancel();
    stall_timer_.cancel();
    StopSource();
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().close();
  }

  Stream stream_;
  std::shared_ptr<ServerShared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<StreamSource> source_;
  std::shared_ptr<Waker> waker_;
  net::steady_timer poll_timer_;
  net::steady_timer timeout_timer_;
  net::steady_timer stall_timer_;
  std::string chunk_;
  std::array<char, 512> client_buf_{};
  bool polling_ = false;
  bool writing_ = false;
  bool ended_ = false;
  bool finishing_ = false;
  bool closed_ = false;
  bool counted_watch_ = false;
  bool handed_off_ = false;  // upgraded: the WsSession owns the stream and its count
};

// Serves a connection.
template <class Stream>
void Start(std::shared_ptr<ServerShared> shared, Stream stream) {
  std::make_shared<Session<Stream>>(std::move(stream), std::move(shared))->Run();
}

}  // namespace pjemu::apiserver::session_impl
