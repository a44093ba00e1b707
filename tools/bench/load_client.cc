// bench_load: a closed-loop HTTP/1.1 load generator for the API-throughput benchmark (LIST and
// CREATE, which wrk cannot vary or check). N keep-alive connections, each sending its next
// request as soon as the previous answer arrived, all driven by one io thread (like wrk's
// event loop) so the client takes as little CPU as possible from the server on a small machine.
// A POST body may contain "{{N}}", replaced by a counter so every CREATE has its own name.
// Prints one JSON line: requests, ok (2xx), other, seconds, rps, p50_ms, p99_ms.
// usage: bench_load --port P --method GET|POST --target T [--body-file F] [--clients N]
//                   [--seconds S] [--host H]
#include <utility>  // before Boost 1.74's asio, which uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct Shared {
  std::string host = "127.0.0.1";
  int port = 0;
  http::verb method = http::verb::get;
  std::string target = "/";
  std::string body;
  SteadyClock::time_point end;
  std::uint64_t counter = 0;
  std::uint64_t ok = 0, other = 0, errors = 0;
  std::vector<double> latency_ms;
};

class Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(net::io_context& ioc, Shared& s) : stream_(ioc), s_(s) {}
  void Start() {
    stream_.async_connect(tcp::endpoint(net::ip::make_address(s_.host), s_.port),
                          [self = shared_from_this()](beast::error_code ec) {
                            if (ec) {
                              ++self->s_.errors;
                              return;
                            }
                            self->Send();
                          });
  }

 private:
  void Send() {
    if (SteadyClock::now() >= s_.end) return;
    req_ = {s_.method, s_.target, 11};
    req_.set(http::field::host, s_.host);
    req_.set(http::field::accept, "application/json");
    if (s_.method == http::verb::post) {
      std::string body = s_.body;
      auto at = body.find("{{N}}");
      if (at != std::string::npos) body.replace(at, 5, std::to_string(s_.counter++));
      req_.set(http::field::content_type, "application/json");
      req_.body() = std::move(body);
    }
    req_.prepare_payload();
    sent_ = SteadyClock::now();
    http::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        ++self->s_.errors;
        return;
      }
      self->Receive();
    });
  }
  void Receive() {
    res_.emplace();
    res_->body_limit(64 * 1024 * 1024);
    http::async_read(stream_, buffer_, *res_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) {
                         ++self->s_.errors;
                         return;
                       }
                       auto now = SteadyClock::now();
                       if (now < self->s_.end) {
                         int code = static_cast<int>(self->res_->get().result_int());
                         (code / 100 == 2 ? self->s_.ok : self->s_.other)++;
                         self->s_.latency_ms.push_back(
                             std::chrono::duration<double, std::milli>(now - self->sent_).count());
                       }
                       self->Send();
                     });
  }

  beast::tcp_stream stream_;
  Shared& s_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::string_body>> res_;
  SteadyClock::time_point sent_;
};

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  int clients = 1;
  double seconds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--port") s.port = std::atoi(v.c_str());
    else if (a == "--host") s.host = v;
    else if (a == "--method") s.method = v == "POST" ? http::verb::post : http::verb::get;
    else if (a == "--target") s.target = v;
    else if (a == "--clients") clients = std::atoi(v.c_str());
    else if (a == "--seconds") seconds = std::atof(v.c_str());
    else if (a == "--body-file") {
      std::ifstream in(v);
      std::stringstream ss;
      ss << in.rdbuf();
      s.body = ss.str();
    } else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  net::io_context ioc(1);
  const auto start = SteadyClock::now();
  s.end = start + std::chrono::duration_cast<SteadyClock::duration>(
                      std::chrono::duration<double>(seconds));
  for (int i = 0; i < clients; ++i) std::make_shared<Conn>(ioc, s)->Start();
  ioc.run();
  double elapsed = std::chrono::duration<double>(s.end - start).count();
  std::sort(s.latency_ms.begin(), s.latency_ms.end());
  auto pct = [&](double p) {
    if (s.latency_ms.empty()) return 0.0;
    return s.latency_ms[std::min(s.latency_ms.size() - 1,
                                 static_cast<std::size_t>(p * s.latency_ms.size()))];
  };
  std::printf(
      "{\"requests\": %llu, \"ok\": %llu, \"other\": %llu, \"errors\": %llu, \"seconds\": %.3f, "
      "\"rps\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f}\n",
      static_cast<unsigned long long>(s.ok + s.other), static_cast<unsigned long long>(s.ok),
      static_cast<unsigned long long>(s.other), static_cast<unsigned long long>(s.errors),
      elapsed, (s.ok + s.other) / elapsed, pct(0.5), pct(0.99));
  return 0;
}
