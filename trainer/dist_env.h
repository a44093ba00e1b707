// The distributed environment of one trainer process: the env the training operator injects
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), validated, and the c10d rendezvous built from it
// (TCPStore on MASTER_ADDR:MASTER_PORT, rank 0 serves it; ProcessGroupGloo on the loopback device
// unless GLOO_SOCKET_IFNAME is set; ProcessGroupNCCL when built with CUDA and --backend nccl).
// Flow: main.cc -> ReadDistEnv -> Comm::Connect -> TrainLoop. Thread safety: Comm's collectives
// are called from the training thread only; its watchdog thread only reads atomics.
#pragma once

#include <torch/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/status.h"

namespace pjemu::trainer {

struct DistEnv {
  bool from_env = false;  // false: no WORLD_SIZE in the env, a single process (no rendezvous)
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "localhost";
  int master_port = 1234;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// The process environment (getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

// Reads and validates the env. No WORLD_SIZE: single process, like the reference. Otherwise all
// four variables must be set and sane; a kInvalid Status names the variable and its value.
Result<DistEnv> ReadDistEnv(const EnvLookup& env = ProcessEnv);

// A process group, or nothing at world size 1. Collectives return kUnavailable when a peer died
// or a collective timed out (retryable); a watchdog thread ends the process with kExitPeerLost
// when a collective hangs past the timeout plus a grace period despite gloo's own timeout.
class Comm {
 public:
  virtual ~Comm() = default;
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  // Sum of each tensor over all ranks, in place.
  virtual Status AllReduceSum(std::vector<torch::Tensor>& tensors) = 0;
  // Rank 0's values to every rank, in place.
  virtual Status Broadcast(std::vector<torch::Tensor>& tensors) = 0;
  virtual Status Barrier() = 0;
  // Called by the watchdog (another thread) when SIGTERM arrived while a collective is blocked
  // for more than a second; the model is not being written then. The process then exits 143.
  virtual void SetOnTermWhileBlocked(std::function<void()> fn) { (void)fn; }

 protected:
  int rank_ = 0;
  int world_size_ = 1;
};

// Connects to the group: kInternal when the master cannot be reached (or the port cannot be
// bound) within `timeout`, kUnavailable when peers do not all join, kInvalid for a backend this
// build lacks. World size 1 without env returns a no-op Comm.
Result<std::unique_ptr<Comm>> ConnectComm(const DistEnv& env, const std::string& backend,
                                          std::chrono::milliseconds timeout);

}  // namespace pjemu::trainer
