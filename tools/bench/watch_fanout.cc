// bench_watch_fanout: N clients watch pytorchjobs over HTTP (chunked watch streams, as kubectl
// and client-go open them); the benchmark then patches an annotation of one PyTorchJob W times
// and measures, for each write, the time from sending the PATCH to the moment the event reached
// the last of the N watchers (and the median watcher). All watch connections are driven by one
// io thread; the writer is a plain keep-alive connection on the main thread.
// Prints one JSON line: watchers, writes, last_p50_ms, last_p99_ms, median_p50_ms, lost.
// usage: bench_watch_fanout --port P --ns NS --job NAME [--watchers N] [--writes W]
#include <utility>  // before Boost 1.74's asio, which uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr char kMark[] = "bench-mark-";
constexpr int kMaxWrites = 100000;

struct Shared {
  int watchers = 0;
  std::atomic<int> ready{0};
  std::vector<std::atomic<int>> seen = std::vector<std::atomic<int>>(kMaxWrites);
  // arrival times (ns since epoch of steady clock) per write: last and all (for the median)
  std::vector<std::vector<std::int64_t>> arrivals = std::vector<std::vector<std::int64_t>>(kMaxWrites);
};

class Watcher : public std::enable_shared_from_this<Watcher> {
 public:
  Watcher(net::io_context& ioc, Shared& s, std::string request)
      : socket_(ioc), s_(s), request_(std::move(request)) {}
  void Start(const tcp::endpoint& ep) {
    socket_.async_connect(ep, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      net::async_write(self->socket_, net::buffer(self->request_),
                       [self](beast::error_code ec, std::size_t) {
                         if (!ec) self->Read();
                       });
    });
  }

 private:
  void Read() {
    socket_.async_read_some(net::buffer(buf_), [self = shared_from_this()](beast::error_code ec,
                                                                           std::size_t n) {
      if (ec) return;
      self->OnData(n);
      self->Read();
    });
  }
  void OnData(std::size_t n) {
    const auto now = SteadyClock::now().time_since_epoch().count();
    pending_.append(buf_.data(), n);
    if (!headers_) {
      if (pending_.find("\r\n\r\n") == std::string::npos) return;
      headers_ = true;
      if (pending_.rfind("HTTP/1.1 200", 0) == 0) ++s_.ready;
    }
    std::size_t at;
    while ((at = pending_.find(kMark)) != std::string::npos) {
      std::size_t d = at + sizeof(kMark) - 1, e = d;
      while (e < pending_.size() && std::isdigit(static_cast<unsigned char>(pending_[e]))) ++e;
      if (e == pending_.size()) break;  // the number may continue in the next read
      int k = std::atoi(pending_.c_str() + d);
      if (k >= 0 && k < kMaxWrites) {
        s_.arrivals[k].push_back(now);  // single io thread: no lock needed
        ++s_.seen[k];
      }
      pending_.erase(0, e);
    }
    if (pending_.size() > 64) pending_.erase(0, pending_.size() - 64);
  }

  tcp::socket socket_;
  Shared& s_;
  std::string request_;
  std::array<char, 16384> buf_{};
  std::string pending_;
  bool headers_ = false;
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, writes = 100;
  std::string ns = "default", job;
  auto s = std::make_unique<Shared>();
  s->watchers = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--port") port = std::atoi(v.c_str());
    else if (a == "--ns") ns = v;
    else if (a == "--job") job = v;
    else if (a == "--watchers") s->watchers = std::atoi(v.c_str());
    else if (a == "--writes") writes = std::min(std::atoi(v.c_str()), kMaxWrites);
  }
  const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
  const std::string path = "/apis/kubeflow.org/v1/namespaces/" + ns + "/pytorchjobs";

  // The writer's connection, and the job's current resourceVersion to watch from.
  net::io_context wio;
  beast::tcp_stream writer(wio);
  writer.connect(ep);
  beast::flat_buffer wbuf;
  auto exchange = [&](http::verb verb, const std::string& target, const std::string& body,
                      const char* ctype) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::accept, "application/json");
    if (!body.empty()) {
      req.set(http::field::content_type, ctype);
      req.body() = body;
    }
    req.prepare_payload();
    http::write(writer, req);
    http::response<http::string_body> res;
    http::read(writer, wbuf, res);
    return res;
  };
  auto got = exchange(http::verb::get, path + "/" + job, "", "");
  if (got.result_int() != 200) {
    std::cerr << "GET job: " << got.result_int() << " " << got.body() << "\n";
    return 1;
  }
  std::string rv;
  {
    auto at = got.body().find("\"resourceVersion\":\"");
    if (at != std::string::npos) {
      at += 19;
      rv = got.body().substr(at, got.body().find('"', at) - at);
    }
  }

  net::io_context ioc(1);
  auto guard = net::make_work_guard(ioc);
  const std::string request = "GET " + path + "?watch=true&resourceVersion=" + rv +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n";
  for (int i = 0; i < s->watchers; ++i) std::make_shared<Watcher>(ioc, *s, request)->Start(ep);
  std::thread io([&ioc] { ioc.run(); });
  const auto setup_deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (s->ready < s->watchers && SteadyClock::now() < setup_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (s->ready < s->watchers) {
    std::cerr << "only " << s->ready << " of " << s->watchers << " watches opened\n";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  std::vector<double> last_ms, median_ms;
  int lost = 0;
  for (int k = 0; k < writes; ++k) {
    const std::string patch = "{\"metadata\":{\"annotations\":{\"bench\":\"" +
                              std::string(kMark) + std::to_string(k) + "\"}}}";
    const auto t0 = SteadyClock::now();
    auto res = exchange(http::verb::patch, path + "/" + job, patch,
                        "application/merge-patch+json");
    if (res.result_int() != 200) {
      std::cerr << "PATCH: " << res.result_int() << " " << res.body() << "\n";
      break;
    }
    const auto deadline = t0 + std::chrono::seconds(10);
    while (s->seen[k] < s->ready && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // Give the io thread a moment to finish its bookkeeping before reading the times.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::promise<std::vector<std::int64_t>> copied;
    net::post(ioc, [&] { copied.set_value(s->arrivals[k]); });
    std::vector<std::int64_t> times = copied.get_future().get();
    if (static_cast<int>(times.size()) < s->ready) ++lost;
    if (times.empty()) continue;
    std::sort(times.begin(), times.end());
    const auto base = t0.time_since_epoch().count();
    last_ms.push_back((times.back() - base) / 1e6);
    median_ms.push_back((times[times.size() / 2] - base) / 1e6);
  }
  std::printf(
      "{\"watchers\": %d, \"opened\": %d, \"writes\": %zu, \"last_p50_ms\": %.3f, "
      "\"last_p99_ms\": %.3f, \"median_p50_ms\": %.3f, \"median_p99_ms\": %.3f, \"lost\": %d}\n",
      s->watchers, s->ready.load(), last_ms.size(), Pct(last_ms, 0.5), Pct(last_ms, 0.99),
      Pct(median_ms, 0.5), Pct(median_ms, 0.99), lost);
  std::fflush(stdout);
  std::_Exit(0);  // the watch connections just drop
}
