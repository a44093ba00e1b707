// bench_bare_server: the peer of the API-throughput benchmark. A bare Boost.Beast HTTP/1.1
// server built like pjemu's API server (async accept and sessions on one io thread by default,
// keep-alive, string bodies) that answers every request with one fixed JSON body and does no
// other work: the rate it reaches is what the HTTP layer alone costs on this machine.
// usage: bench_bare_server --body-file F [--threads N]   (prints "port N", serves until killed)
#include <utility>  // before Boost 1.74's asio, which uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::string& body) : stream_(std::move(socket)), body_(body) {}
  void Read() {
    req_ = {};
    http::async_read(stream_, buffer_, req_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->Close();
                       self->Write();
                     });
  }

 private:
  void Write() {
    res_ = http::response<http::string_body>(http::status::ok, req_.version());
    res_.set(http::field::content_type, "application/json");
    res_.keep_alive(req_.keep_alive());
    res_.body() = body_;
    res_.prepare_payload();
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->res_.keep_alive()) return self->Close();
      self->Read();
    });
  }
  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  }

  beast::tcp_stream stream_;
  const std::string& body_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

void Accept(tcp::acceptor& acceptor, const std::string& body) {
  acceptor.async_accept(net::make_strand(acceptor.get_executor()),
                        [&acceptor, &body](beast::error_code ec, tcp::socket socket) {
                          if (!ec) std::make_shared<Session>(std::move(socket), body)->Read();
                          Accept(acceptor, body);
                        });
}

}  // namespace

int main(int argc, char** argv) {
  std::string body_file;
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--body-file")) body_file = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  std::string body = "{}";
  if (!body_file.empty()) {
    std::ifstream in(body_file);
    std::stringstream ss;
    ss << in.rdbuf();
    body = ss.str();
  }
  net::io_context ioc(threads);
  tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  std::printf("port %d\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  Accept(acceptor, body);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();
  return 0;
}
