#include "emulator/apiserver/any_stream.h"

#include <boost/asio/post.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <span>

namespace pjemu::apiserver::session_impl {

namespace beast = boost::beast;
namespace net = boost::asio;

namespace {

std::span<const net::const_buffer> Written(const Transport& transport, std::size_t count) {
  return {transport.write_buffers.data(), count};
}

// Calls a handler of void(error_code) style through an IoCallback.
struct Done {
  IoCallback done;
  void operator()(beast::error_code ec) { done(ec, 0); }
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// What readies each kind of stream: nothing for TCP (completes, posted), the server's side of
// the handshake for TLS.
void Ready(beast::tcp_stream& stream, IoCallback done) {
  net::post(stream.get_executor(), [done = std::move(done)]() mutable { done({}, 0); });
}
void Ready(TlsStream& stream, IoCallback done) {
  stream.async_handshake(net::ssl::stream_base::server, Done{std::move(done)});
}

template <class Stream>
class TransportOver final : public Transport {
 public:
  template <class... Args>
  explicit TransportOver(Args&&... args) : stream_(std::forward<Args>(args)...) {}
  beast::tcp_stream& Lowest() override { return beast::get_lowest_layer(stream_); }
  void Start(IoCallback done) override { Ready(stream_, std::move(done)); }
  void ReadSome(net::mutable_buffer buffer, IoCallback done) override {
    stream_.async_read_some(buffer, std::move(done));
  }
  void WriteSome(std::size_t count, IoCallback done) override {
    stream_.async_write_some(Written(*this, count), std::move(done));
  }
  void Teardown(beast::role_type role, beast::error_code& ec) override {
    using beast::websocket::teardown;
    teardown(role, stream_, ec);
  }
  void AsyncTeardown(beast::role_type role, IoCallback done) override {
    using beast::websocket::async_teardown;
    async_teardown(role, stream_, Done{std::move(done)});
  }

 private:
  Stream stream_;
};

}  // namespace

AnyStream AnyStream::Tcp(net::ip::tcp::socket socket) {
  return AnyStream(std::make_unique<TransportOver<beast::tcp_stream>>(std::move(socket)));
}

AnyStream AnyStream::Tls(net::ip::tcp::socket socket, net::ssl::context& context) {
  return AnyStream(
      std::make_unique<TransportOver<TlsStream>>(beast::tcp_stream(std::move(socket)), context));
}

}  // namespace pjemu::apiserver::session_impl
