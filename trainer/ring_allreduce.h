// The gradient all-reduce of the gloo backend's ranks: a ring over TCP driven by the calling
// thread. Gloo's own all-reduce hands each message between the caller, its worker thread and its
// event loop thread; on this 2-core VM those wake-ups cost 1.5-2 ms a call whatever the size
// (1,000 floats 1.58 ms, 431,000 floats 2.18 ms, measured with Python's gloo on idle cores),
// 19 % of a training step at world size 2 (trainer/README.md, Speed work 13). Here the training
// thread sends and receives itself, spinning briefly before it blocks, so a rank that arrives
// just after its peer pays no wake-up at all. The process group keeps everything else
// (rendezvous, broadcast, barrier, the test's sums).
//
// Algorithm: reduce-scatter then all-gather over N chunks (N = world size), each step sending one
// chunk to the next rank while receiving one from the previous. Each chunk is summed along the
// ring once and then copied, so every rank ends with bit-identical values; the order of the
// additions is fixed by the ranks, so runs replay exactly.
//
// Flow: dist_env.cc (gloo's PgComm) -> RingAllReduce. Thread safety: one thread at a time.
// Errors: kUnavailable when a peer closes its connection or a socket fails, kTimeout when a
// peer makes no progress for `timeout`; the message names the peer's rank.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trainer/status.h"

namespace pjemu::trainer {

// Where the ranks publish their listening addresses: the job's rendezvous store.
struct RingRendezvous {
  std::function<Status(const std::string& key, const std::string& value)> set;
  // Blocks until the key exists (or fails after the store's own timeout).
  std::function<Result<std::string>(const std::string& key)> get;
};

class RingAllReduce {
 public:
  // Listens on `host` (an IPv4 address) at a free port, publishes it under "pjemu_ring/<rank>",
  // connects to the next rank and accepts the previous one. World size 1 connects nothing.
  static Result<std::unique_ptr<RingAllReduce>> Connect(int rank, int world_size,
                                                        const std::string& host,
                                                        const RingRendezvous& rendezvous,
                                                        std::chrono::milliseconds timeout);
  ~RingAllReduce();
  RingAllReduce(const RingAllReduce&) = delete;
  RingAllReduce& operator=(const RingAllReduce&) = delete;

  // data[0, n) = its sum over all ranks, in place. Every rank must call it with the same n.
  Status SumInPlace(float* data, int64_t n);

 private:
  RingAllReduce(int rank, int world_size, int to_next, int from_prev,
                std::chrono::milliseconds timeout);
  // Sends `send_bytes` from `send` to the next rank while receiving `recv_bytes` into `recv`
  // from the previous one; with `add_into`, adds each received float into add_into[i].
  Status Exchange(const char* send, int64_t send_bytes, char* recv, int64_t recv_bytes,
                  float* add_into);

  int rank_, world_size_;
  int to_next_, from_prev_;  // sockets; -1 at world size 1
  std::chrono::milliseconds timeout_;
  std::vector<float> scratch_;  // one received chunk during the reduce-scatter
};

}  // namespace pjemu::trainer
