// Given a connected pair of TCP sockets on 127.0.0.1, AnyStream should behave as an asio
// AsyncStream: its handlers run from the io_context, never inside the call that started the
// operation; a read fills the first non-empty buffer of its sequence at most; a write sends at
// most Transport::kMaxWriteBuffers buffers, and net::async_write of more still sends them all,
// in order; the WebSocket teardown closes the connection.
#include "emulator/apiserver/any_stream.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pjemu::apiserver::session_impl {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

struct Pair {
  net::io_context ioc;
  tcp::socket peer{ioc};
  std::optional<AnyStream> stream;

  Pair() {
    tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    peer.connect(acceptor.local_endpoint());
    stream.emplace(AnyStream::Tcp(acceptor.accept()));
  }
};

TEST_CASE("AnyStream: a handler runs from the io_context, not inside the call", "[any_stream]") {
  Pair pair;
  bool started = false;
  pair.stream->async_start([&](beast::error_code ec) {
    CHECK_FALSE(ec);
    started = true;
  });
  CHECK_FALSE(started);
  pair.ioc.run();
  CHECK(started);
}

TEST_CASE("AnyStream: a read fills the first non-empty buffer at most", "[any_stream]") {
  Pair pair;
  net::write(pair.peer, net::buffer(std::string("abcdefgh")));
  std::string empty, first(3, '.'), second(10, '.');
  std::vector<net::mutable_buffer> buffers{net::buffer(empty), net::buffer(first),
                                           net::buffer(second)};
  std::size_t read = 0;
  pair.stream->async_read_some(buffers, [&](beast::error_code ec, std::size_t n) {
    CHECK_FALSE(ec);
    read = n;
  });
  pair.ioc.run();
  CHECK(read == 3);
  CHECK(first == "abc");
  CHECK(second == std::string(10, '.'));
}

TEST_CASE("AnyStream: a write of more buffers than one call takes still sends them all",
          "[any_stream]") {
  Pair pair;
  std::vector<std::string> pieces;
  std::string expected;
  for (int i = 0; i < 3 * static_cast<int>(Transport::kMaxWriteBuffers) + 1; ++i) {
    pieces.push_back(std::to_string(i) + (i % 5 == 0 ? "" : ","));
    expected += pieces.back();
  }
  pieces.emplace_back();  // an empty buffer is skipped, not sent
  std::vector<net::const_buffer> buffers;
  for (const auto& piece : pieces) buffers.push_back(net::buffer(piece));

  std::size_t first_call = 0;
  pair.stream->async_write_some(buffers, [&](beast::error_code ec, std::size_t n) {
    CHECK_FALSE(ec);
    first_call = n;
  });
  pair.ioc.run();
  pair.ioc.restart();
  std::size_t limit = 0;
  for (std::size_t i = 0; i < Transport::kMaxWriteBuffers; ++i) limit += pieces[i].size();
  CHECK(first_call <= limit);

  std::size_t all = 0;
  net::async_write(*pair.stream, buffers, [&](beast::error_code ec, std::size_t n) {
    CHECK_FALSE(ec);
    all = n;
  });
  pair.ioc.run();
  CHECK(all == expected.size());
  std::string got(first_call + expected.size(), '\0');
  net::read(pair.peer, net::buffer(got));
  CHECK(got == expected.substr(0, first_call) + expected);
}

TEST_CASE("AnyStream: the WebSocket teardown ends the connection", "[any_stream]") {
  Pair pair;
  beast::error_code teardown_ec = net::error::would_block;
  async_teardown(beast::role_type::server, *pair.stream,
                 [&](beast::error_code ec) { teardown_ec = ec; });
  net::write(pair.peer, net::buffer(std::string("bye")));
  pair.peer.shutdown(tcp::socket::shutdown_send);
  pair.ioc.run();
  CHECK_FALSE(teardown_ec);
  std::array<char, 8> rest{};
  beast::error_code ec;
  pair.peer.read_some(net::buffer(rest), ec);
  CHECK(ec == net::error::eof);
}

}  // namespace
}  // namespace pjemu::apiserver::session_impl
