// IoSampler: storage I/O and network traffic over time of every running container, for the web
// console's monitoring charts (T9k's "network bandwidth" and "storage I/O"), from what the kernel
// reports for the container's process group:
//  - storage: /proc/<pid>/io of the live members, summed: read_bytes/write_bytes (what reached
//    the block layer) and syscr/syscw (read and write calls, the IOPS figure);
//  - network: /proc/<leader>/net/dev, the counters of the leader's network namespace summed over
//    its interfaces except lo (receive and transmit bytes). Pods that share the host's network
//    namespace see the host's counters there.
// Each sample turns the counters into rates since the previous sample of the same leader pid (a
// restarted container starts afresh; members that exited take their counts with them, so a rate
// is never negative). History is bounded as ResourceSampler's (resource_sampler.h), whose
// structure this follows; the two are separate so that each stays one reading of /proc.
// Thread safety: every method may be called from any thread; Start runs a sampling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/periodic_thread.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct IoCounters {
  std::int64_t read_bytes = 0, write_bytes = 0;  // storage
  std::int64_t syscr = 0, syscw = 0;             // read and write calls
  std::int64_t rx_bytes = 0, tx_bytes = 0;       // network, all interfaces but lo
};

// The fields of a /proc/<pid>/io text (missing ones stay 0).
IoCounters ParseProcIo(std::string_view text);
// Receive and transmit bytes of a /proc/<pid>/net/dev text, summed over interfaces but lo.
std::pair<std::int64_t, std::int64_t> ParseNetDev(std::string_view text);

struct IoSample {
  Time time{};
  double read_bytes_per_s = 0, write_bytes_per_s = 0;
  double reads_per_s = 0, writes_per_s = 0;
  double rx_bytes_per_s = 0, tx_bytes_per_s = 0;
  Pid pid = 0;
};

struct IoSamplerOptions {
  Duration interval = std::chrono::seconds(1);
  std::size_t max_samples = 1800;
  std::size_t max_containers = 512;
  std::string proc_root = "/proc";
};

class IoSampler {
 public:
  // The running processes as (pid, "<ns>/<pod>/<container>"), as ResourceSampler::Lister.
  using Lister = std::function<std::vector<std::pair<Pid, std::string>>()>;

  IoSampler(const Clock& clock, Lister lister, IoSamplerOptions options = {});
  ~IoSampler();  // Stop()
  IoSampler(const IoSampler&) = delete;
  IoSampler& operator=(const IoSampler&) = delete;

  void Start();
  void Stop();
  void SampleOnce();
  // Samples of the containers whose name starts with name_prefix ("ns/pod/"), by container.
  std::map<std::string, std::vector<IoSample>> Samples(const std::string& name_prefix) const;

 private:
  struct Series {
    std::vector<IoSample> samples;
    IoCounters last;
    Time last_time{};
    bool has_last = false;
  };
  IoCounters ReadGroup(Pid leader) const;

  const Clock& clock_;
  Lister lister_;
  IoSamplerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;  // GUARDED_BY(mu_)
  PeriodicThread sampling_;  // last member: stopped (joined) before the others go
};

}  // namespace pjemu::process
