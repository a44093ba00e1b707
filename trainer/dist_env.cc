#include "trainer/dist_env.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// NCCL only where this Torch has it: its targets define USE_C10D_NCCL, and the header is there.
#if defined(USE_C10D_NCCL) && __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define PJEMU_TRAINER_NCCL 1
#endif

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include "trainer/exit_codes.h"
#include "trainer/ring_allreduce.h"
#include "trainer/termination.h"

namespace pjemu::trainer {
namespace {

Result<int> ParseInt(const std::string& name, const std::string& value) {
  int v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty()) {
    return Status(Code::kInvalid, "env " + name + "=\"" + value + "\" is not an integer");
  }
  return v;
}

Result<std::string> Need(const EnvLookup& env, const std::string& name) {
  auto v = env(name);
  if (!v) return Status(Code::kInvalid, "env " + name + " is not set (WORLD_SIZE is)");
  return *v;
}

class SingleComm : public Comm {
 public:
  Status AllReduceSum(std::vector<torch::Tensor>&) override { return Status::Ok(); }
  Status Broadcast(std::vector<torch::Tensor>&) override { return Status::Ok(); }
  Status Barrier() override { return Status::Ok(); }
};

// ProcessGroupGloo/NCCL derive from c10d::ProcessGroup in 1.13 and from c10d::Backend in 2.x;
// every call used here exists on both, so the holder is a template.
template <typename Pg>
class PgComm : public Comm {
 public:
  // `ring`, when set, carries the all-reduces of one contiguous float32 CPU tensor (the
  // gradients) instead of the process group.
  PgComm(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<Pg> pg, int rank, int world,
         std::chrono::milliseconds timeout, std::unique_ptr<RingAllReduce> ring = nullptr)
      : store_(std::move(store)), pg_(std::move(pg)), ring_(std::move(ring)), timeout_(timeout) {
    rank_ = rank;
    world_size_ = world;
    watchdog_ = std::thread([this] { Watch(); });
  }
  ~PgComm() override {
    stop_.store(true);
    watchdog_.join();
  }

  Status AllReduceSum(std::vector<torch::Tensor>& t) override {
    if (ring_ != nullptr && t.size() == 1 && t[0].device().is_cpu() &&
        t[0].scalar_type() == torch::kFloat32 && t[0].is_contiguous()) {
      return Run("all-reduce",
                 [&] { return ring_->SumInPlace(t[0].data_ptr<float>(), t[0].numel()); });
    }
    return Run("all-reduce", [&] { pg_->allreduce(t)->wait(); });
  }
  Status Broadcast(std::vector<torch::Tensor>& t) override {
    return Run("broadcast", [&] { pg_->broadcast(t)->wait(); });
  }
  Status Barrier() override {
    return Run("barrier", [&] { pg_->barrier()->wait(); });
  }
  void SetOnTermWhileBlocked(std::function<void()> fn) override { on_term_ = std::move(fn); }

 private:
  // Runs one collective, blocked_since_ set for the watchdog meanwhile: f throws (c10d) or
  // returns a Status (the ring); either failure becomes "<what> with peers failed: ...".
  template <typename F>
  Status Run(const char* what, F&& f) {
    blocked_since_.store(Now());
    Status s = Status::Ok();
    try {
      if constexpr (std::is_same_v<std::invoke_result_t<F>, Status>) {
        s = f();
      } else {
        f();
      }
    } catch (const std::exception& e) {
      std::string msg = e.what();
      s = Status(Code::kUnavailable, msg.substr(0, msg.find('\n')));
    }
    blocked_since_.store(0);
    if (!s.ok()) return Status(s.code(), std::string(what) + " with peers failed: " + s.message());
    return s;
  }

  static int64_t Now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Gloo's timeout is the first line of defence; this catches a collective that hangs anyway,
  // and saves a checkpoint on SIGTERM while blocked (the peers may already be gone).
  void Watch() {
    const int64_t grace_ms = timeout_.count() + 5000;
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const int64_t since = blocked_since_.load();
      if (since == 0) continue;
      const int64_t blocked = Now() - since;
      if (TerminationRequested() && blocked > 1000) {
        if (on_term_) on_term_();
        std::fprintf(stderr, "pjemu-trainer: SIGTERM while waiting for peers; exiting\n");
        std::fflush(nullptr);
        _exit(kExitTerminated);
      }
      if (blocked > grace_ms) {
        std::fprintf(stderr,
                     "pjemu-trainer: collective blocked for %lld ms (--collective-timeout %lld "
                     "ms): peer lost\n",
                     static_cast<long long>(blocked), static_cast<long long>(timeout_.count()));
        std::fflush(nullptr);
        _exit(kExitPeerLost);
      }
    }
  }

  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<Pg> pg_;
  std::unique_ptr<RingAllReduce> ring_;
  std::chrono::milliseconds timeout_;
  std::atomic<int64_t> blocked_since_{0};
  std::atomic<bool> stop_{false};
  std::function<void()> on_term_;
  std::thread watchdog_;
};

std::string FirstLine(const std::exception& e) {
  std::string msg = e.what();
  return msg.substr(0, msg.find('\n'));
}

// The IPv4 address of a network interface (GLOO_SOCKET_IFNAME, or lo).
Result<std::string> InterfaceAddress(const std::string& ifname) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return InternalError("getifaddrs failed");
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || ifname != i->ifa_name) {
      continue;
    }
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, ip, sizeof ip);
    found = ip;
  }
  freeifaddrs(list);
  if (found.empty()) {
    return Status(Code::kInvalid,
                  "GLOO_SOCKET_IFNAME=" + ifname + ": no IPv4 interface by that name");
  }
  return found;
}

// The ring's rendezvous through the job's store (blocking get with the store's timeout).
RingRendezvous StoreRendezvous(c10d::Store& store) {
  RingRendezvous r;
  r.set = [&store](const std::string& key, const std::string& value) -> Status {
    try {
      store.set(key, std::vector<uint8_t>(value.begin(), value.end()));
    } catch (const std::exception& e) {
      return Status(Code::kUnavailable, "rendezvous store: set " + key + ": " + FirstLine(e));
    }
    return Status::Ok();
  };
  r.get = [&store](const std::string& key) -> Result<std::string> {
    try {
      const std::vector<uint8_t> v = store.get(key);
      return std::string(v.begin(), v.end());
    } catch (const std::exception& e) {
      return Status(Code::kUnavailable, "rendezvous store: get " + key + ": " + FirstLine(e));
    }
  };
  return r;
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

Result<DistEnv> ReadDistEnv(const EnvLookup& env) {
  DistEnv d;
  auto ws = env("WORLD_SIZE");
  if (!ws) return d;
  d.from_env = true;
  ASSIGN_OR_RETURN(d.world_size, ParseInt("WORLD_SIZE", *ws));
  if (d.world_size < 1) {
    return Status(Code::kInvalid, "env WORLD_SIZE=" + *ws + " must be >= 1");
  }
  ASSIGN_OR_RETURN(std::string rank, Need(env, "RANK"));
  ASSIGN_OR_RETURN(d.rank, ParseInt("RANK", rank));
  if (d.rank < 0 || d.rank >= d.world_size) {
    return Status(Code::kInvalid, "env RANK=" + rank + " must be in [0, WORLD_SIZE=" + *ws + ")");
  }
  ASSIGN_OR_RETURN(d.master_addr, Need(env, "MASTER_ADDR"));
  if (d.master_addr.empty()) return Status(Code::kInvalid, "env MASTER_ADDR is empty");
  ASSIGN_OR_RETURN(std::string port, Need(env, "MASTER_PORT"));
  ASSIGN_OR_RETURN(d.master_port, ParseInt("MASTER_PORT", port));
  if (d.master_port < 1 || d.master_port > 65535) {
    return Status(Code::kInvalid, "env MASTER_PORT=" + port + " must be in 1..65535");
  }
  return d;
}

Result<std::unique_ptr<Comm>> ConnectComm(const DistEnv& env, const std::string& backend,
                                          std::chrono::milliseconds timeout) {
  if (backend == "mpi") return Status(Code::kInvalid, "--backend mpi is not supported");
#if !defined(PJEMU_TRAINER_NCCL)
  if (backend == "nccl") {
    return Status(Code::kInvalid, "--backend nccl: this build's Torch has no NCCL (use gloo)");
  }
#endif
  if (env.world_size == 1 && !env.from_env) return std::unique_ptr<Comm>(new SingleComm());
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  c10::intrusive_ptr<c10d::Store> store;
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.master_port);
    so.isServer = env.rank == 0;
    so.numWorkers = env.world_size;
    so.waitWorkers = true;
    so.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    store = c10::make_intrusive<c10d::PrefixStore>("default_pg/", tcp);
  } catch (const std::exception& e) {
    std::string msg = FirstLine(e);
    if (env.rank == 0 && msg.find("clients joined") != std::string::npos) {
      return Status(Code::kUnavailable, "rendezvous at " + where + ": " + msg);
    }
    return InternalError(std::string(env.rank == 0 ? "cannot serve" : "cannot reach") +
                         " master at " + where + " (MASTER_ADDR/MASTER_PORT): " + msg);
  }
  try {
#if defined(PJEMU_TRAINER_NCCL)
    if (backend == "nccl") {
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = timeout;
      auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, opts);
      return std::unique_ptr<Comm>(
          new PgComm<c10d::ProcessGroupNCCL>(store, pg, env.rank, env.world_size, timeout));
    }
#endif
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* ifname_env = std::getenv("GLOO_SOCKET_IFNAME");
    const std::string ifname =
        ifname_env != nullptr && *ifname_env != '\0' ? ifname_env : std::string("lo");
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    opts->threads = 1;
    auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, opts);
    // The gradients' ring listens where gloo does: the same interface's address.
    ASSIGN_OR_RETURN(std::string host, InterfaceAddress(ifname));
    ASSIGN_OR_RETURN(auto ring, RingAllReduce::Connect(env.rank, env.world_size, host,
                                                       StoreRendezvous(*store), timeout));
    return std::unique_ptr<Comm>(new PgComm<c10d::ProcessGroupGloo>(
        store, pg, env.rank, env.world_size, timeout, std::move(ring)));
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable, "process group rendezvous at " + where + ": " + FirstLine(e));
  }
}

}  // namespace pjemu::trainer
