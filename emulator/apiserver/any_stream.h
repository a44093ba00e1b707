// AnyStream (private to emulator/apiserver): one accepted connection's byte stream, plain TCP
// or TLS over TCP, behind one type. The HTTP, WebSocket and raw sessions (session_impl.h) are
// templates over their stream; over AnyStream, Beast's HTTP and WebSocket operations are
// compiled once, and only the five operations of the Transport below once per kind
// (any_stream.cc). With one instantiation per kind, the TLS session alone was the build's
// heaviest file (README "Build times").
//
// Contract: an asio AsyncStream. At most one read and one write in flight, as for any asio
// stream; their handlers run on the socket's executor (the connection's strand), never inside
// the call that started the operation. A read fills the first non-empty buffer of its sequence
// at most and a write sends its first kMaxWriteBuffers non-empty buffers at most, which the
// read_some/write_some contract allows (Beast's composed operations loop until done). Not
// thread-safe: use it from its strand. Moving an AnyStream keeps its operations in flight
// valid (the transport lives on the heap).
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace pjemu::apiserver::session_impl {

// A move-only completion handler of an I/O operation, its type erased.
class IoCallback {
 public:
  template <class Handler,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<Handler>, IoCallback>>>
  explicit IoCallback(Handler&& handler)
      : call_(std::make_unique<Holder<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}

  // Called once. The holder is released first: the handler usually starts the stream's next
  // operation, with a new IoCallback.
  void operator()(boost::beast::error_code ec, std::size_t bytes) {
    auto call = std::move(call_);
    call->Invoke(ec, bytes);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void Invoke(boost::beast::error_code ec, std::size_t bytes) = 0;
  };
  template <class Handler>
  struct Holder final : Base {
    explicit Holder(Handler h) : handler(std::move(h)) {}
    void Invoke(boost::beast::error_code ec, std::size_t bytes) override {
      std::move(handler)(ec, bytes);
    }
    Handler handler;
  };
  std::unique_ptr<Base> call_;
};

// What one kind of stream does; any_stream.cc has TCP's and TLS's.
class Transport {
 public:
  static constexpr std::size_t kMaxWriteBuffers = 16;
  virtual ~Transport() = default;
  virtual boost::beast::tcp_stream& Lowest() = 0;
  // TLS: the server's side of the handshake. TCP: completes at once (posted).
  virtual void Start(IoCallback done) = 0;
  virtual void ReadSome(boost::asio::mutable_buffer buffer, IoCallback done) = 0;
  // Sends from write_buffers[0, count).
  virtual void WriteSome(std::size_t count, IoCallback done) = 0;
  // A WebSocket's closing of its stream (TLS: close_notify first), as Beast's teardown.
  virtual void Teardown(boost::beast::role_type role, boost::beast::error_code& ec) = 0;
  virtual void AsyncTeardown(boost::beast::role_type role, IoCallback done) = 0;

  // The buffers of the write in flight (kept here: the TLS layer refers to them until done).
  std::array<boost::asio::const_buffer, kMaxWriteBuffers> write_buffers{};
};

class AnyStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using next_layer_type = boost::beast::tcp_stream;

  static AnyStream Tcp(boost::asio::ip::tcp::socket socket);
  // `context` must outlive the stream.
  static AnyStream Tls(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& context);

  executor_type get_executor() { return next_layer().get_executor(); }
  // The TCP stream under it all (beast::get_lowest_layer finds it here): timeouts, close.
  boost::beast::tcp_stream& next_layer() { return transport_->Lowest(); }

  // Makes the connection ready to read: TLS's handshake. Handler: void(error_code).
  template <class Handler>
  void async_start(Handler&& handler) {
    transport_->Start(WithoutBytes(std::forward<Handler>(handler)));
  }

  template <class MutableBufferSequence, class Handler>
  void async_read_some(const MutableBufferSequence& buffers, Handler&& handler) {
    boost::asio::mutable_buffer first;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      first = *it;
      if (first.size() > 0) break;
    }
    transport_->ReadSome(first, IoCallback(std::forward<Handler>(handler)));
  }

  template <class ConstBufferSequence, class Handler>
  void async_write_some(const ConstBufferSequence& buffers, Handler&& handler) {
    std::size_t count = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && count < Transport::kMaxWriteBuffers;
         ++it) {
      boost::asio::const_buffer buffer = *it;
      if (buffer.size() > 0) transport_->write_buffers[count++] = buffer;
    }
    transport_->WriteSome(count, IoCallback(std::forward<Handler>(handler)));
  }

  // Found by Beast's WebSocket stream (argument-dependent lookup) to close the connection.
  friend void teardown(boost::beast::role_type role, AnyStream& stream,
                       boost::beast::error_code& ec) {
    stream.transport_->Teardown(role, ec);
  }
  template <class Handler>
  friend void async_teardown(boost::beast::role_type role, AnyStream& stream, Handler&& handler) {
    stream.transport_->AsyncTeardown(role, WithoutBytes(std::forward<Handler>(handler)));
  }

 private:
  explicit AnyStream(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {}
  // A handler of void(error_code) (a handshake's, a teardown's) as an IoCallback.
  template <class Handler>
  static IoCallback WithoutBytes(Handler&& handler) {
    return IoCallback([h = std::forward<Handler>(handler)](
                          boost::beast::error_code ec, std::size_t) mutable { std::move(h)(ec); });
  }
  std::unique_ptr<Transport> transport_;
};

}  // namespace pjemu::apiserver::session_impl
