// The gradients' all-reduce ring over real loopback sockets, its ranks as threads of this test
// and its rendezvous an in-memory store: sums (exact on integer values), bit-identical results
// on every rank and run, every world size and length, and the failures a peer can cause (closing,
// hanging, the wrong rank connecting). No Torch needed.
#include "trainer/ring_allreduce.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace pjemu::trainer {
namespace {

using std::chrono::milliseconds;

// The job's store: set, and a get that waits for the key (up to a second).
class MemoryStore {
 public:
  RingRendezvous Rendezvous() {
    RingRendezvous r;
    r.set = [this](const std::string& k, const std::string& v) {
      std::lock_guard<std::mutex> lock(mu_);
      values_[k] = v;
      cv_.notify_all();
      return Status::Ok();
    };
    r.get = [this](const std::string& k) -> Result<std::string> {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::seconds(1), [&] { return values_.count(k) > 0; })) {
        return Status(Code::kTimeout, "no key " + k);
      }
      return values_[k];
    };
    return r;
  }
  void Set(const std::string& k, const std::string& v) { (void)Rendezvous().set(k, v); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
};

// Connects `world` ranks on 127.0.0.1 (each in its own thread, as they would be processes).
std::vector<std::unique_ptr<RingAllReduce>> ConnectAll(int world, MemoryStore& store,
                                                       milliseconds timeout = milliseconds(5000)) {
  std::vector<std::unique_ptr<RingAllReduce>> rings(world);
  std::vector<Status> status(world, Status::Ok());
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      auto ring = RingAllReduce::Connect(r, world, "127.0.0.1", store.Rendezvous(), timeout);
      if (ring.ok()) {
        rings[r] = std::move(*ring);
      } else {
        status[r] = ring.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r << ": " << status[r].message());
    REQUIRE(status[r].ok());
  }
  return rings;
}

// Runs SumInPlace on every rank at once; returns each rank's status.
std::vector<Status> SumAll(std::vector<std::unique_ptr<RingAllReduce>>& rings,
                           std::vector<std::vector<float>>& data) {
  std::vector<Status> status(rings.size(), Status::Ok());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < rings.size(); ++r) {
    threads.emplace_back([&, r] {
      status[r] = rings[r]->SumInPlace(data[r].data(), static_cast<int64_t>(data[r].size()));
    });
  }
  for (auto& t : threads) t.join();
  return status;
}

TEST_CASE("the ring sums exactly on every rank, every world size and length", "[ring]") {
  for (int world : {1, 2, 3, 4}) {
    MemoryStore store;
    auto rings = ConnectAll(world, store);
    for (int64_t n : {1, 2, 3, 5, 1000, 431080}) {
      std::vector<std::vector<float>> data(world, std::vector<float>(n));
      for (int r = 0; r < world; ++r) {
        for (int64_t i = 0; i < n; ++i) data[r][i] = static_cast<float>((i % 97) * (r + 1) - r);
      }
      for (const Status& s : SumAll(rings, data)) REQUIRE(s.ok());
      std::vector<float> want(n, 0.0f);
      for (int64_t i = 0; i < n; ++i) {
        for (int q = 0; q < world; ++q) want[i] += static_cast<float>((i % 97) * (q + 1) - q);
      }
      for (int r = 0; r < world; ++r) {
        INFO("world " << world << " n " << n << " rank " << r);
        REQUIRE(data[r] == want);
      }
    }
  }
}

TEST_CASE("every rank ends with the same bits, run after run", "[ring]") {
  const int world = 3;
  const int64_t n = 100003;
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.0f, 1e-3f);
  std::vector<std::vector<float>> input(world, std::vector<float>(n));
  for (auto& v : input) {
    for (float& x : v) x = dist(gen);
  }
  MemoryStore store;
  auto rings = ConnectAll(world, store);
  std::vector<std::vector<float>> first = input, second = input;
  for (const Status& s : SumAll(rings, first)) REQUIRE(s.ok());
  for (const Status& s : SumAll(rings, second)) REQUIRE(s.ok());
  for (int r = 0; r < world; ++r) {
    REQUIRE(std::memcmp(first[r].data(), first[0].data(), n * sizeof(float)) == 0);
    REQUIRE(std::memcmp(second[r].data(), first[0].data(), n * sizeof(float)) == 0);
  }
  // And it is a sum: within float rounding of the double sum.
  for (int64_t i = 0; i < n; i += 997) {
    double want = 0;
    for (int r = 0; r < world; ++r) want += input[r][i];
    REQUIRE(first[0][i] == Approx(want).margin(1e-9));
  }
}

TEST_CASE("a peer that closes fails the others' sum, naming it", "[ring]") {
  MemoryStore store;
  auto rings = ConnectAll(2, store);
  rings[1].reset();  // rank 1's process died
  std::vector<float> v(1000, 1.0f);
  const auto start = std::chrono::steady_clock::now();
  Status s = rings[0]->SumInPlace(v.data(), static_cast<int64_t>(v.size()));
  REQUIRE(s.code() == Code::kUnavailable);
  REQUIRE_THAT(s.message(), Catch::Contains("rank 1"));
  REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("a peer that hangs times the sum out", "[ring]") {
  MemoryStore store;
  auto rings = ConnectAll(2, store, milliseconds(300));
  std::vector<float> v(1000, 1.0f);
  const auto start = std::chrono::steady_clock::now();
  Status s = rings[0]->SumInPlace(v.data(), static_cast<int64_t>(v.size()));  // rank 1 never calls
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(s.code() == Code::kTimeout);
  REQUIRE_THAT(s.message(), Catch::Contains("300 ms"));
  REQUIRE(took >= milliseconds(300));
  REQUIRE(took < milliseconds(3000));
}

TEST_CASE("the wrong rank connecting is refused", "[ring]") {
  MemoryStore store;
  // A stranger listens as rank 1 (rank 0's next) and connects to rank 0 saying it is rank 5.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(listener, 1) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  store.Set("pjemu_ring/1", "127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
  bool sent = false;  // checked after join: Catch's assertions are not thread-safe
  std::thread stranger([&] {
    auto zero = store.Rendezvous().get("pjemu_ring/0");
    if (!zero.ok()) return;
    const std::string addr = *zero;
    sockaddr_in b{};
    b.sin_family = AF_INET;
    b.sin_port = htons(static_cast<uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1))));
    b.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    const int32_t five = 5;
    sent = connect(fd, reinterpret_cast<sockaddr*>(&b), sizeof b) == 0 &&
           send(fd, &five, sizeof five, 0) == sizeof five;
    std::this_thread::sleep_for(milliseconds(200));
    close(fd);
  });
  auto ring = RingAllReduce::Connect(0, 2, "127.0.0.1", store.Rendezvous(), milliseconds(2000));
  stranger.join();
  close(listener);
  REQUIRE(sent);
  REQUIRE(!ring.ok());
  CHECK(ring.status().code() == Code::kUnavailable);  // exit 200, retryable
  REQUIRE_THAT(ring.status().message(), Catch::Contains("expected rank 1, rank 5 connected"));
}

TEST_CASE("a peer's address that is not IPv4 host:port fails the rendezvous, naming it", "[ring]") {
  MemoryStore store;
  store.Set("pjemu_ring/1", "nowhere:80");
  auto ring = RingAllReduce::Connect(0, 2, "127.0.0.1", store.Rendezvous(), milliseconds(100));
  REQUIRE(!ring.ok());
  CHECK(ring.status().code() == Code::kUnavailable);
  CHECK_THAT(ring.status().message(), Catch::Contains("rank 1 published no IPv4 host:port"));
}

TEST_CASE("a listen host that is not an IPv4 address is refused", "[ring]") {
  MemoryStore store;
  auto ring = RingAllReduce::Connect(0, 2, "not-an-ip", store.Rendezvous(), milliseconds(100));
  REQUIRE(!ring.ok());
  REQUIRE(ring.status().code() == Code::kInvalid);
  REQUIRE_THAT(ring.status().message(), Catch::Contains("not-an-ip"));
}

}  // namespace
}  // namespace pjemu::trainer
