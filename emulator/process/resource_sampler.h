// ResourceSampler: CPU and memory use over time of every running container, for the web
// console's resource charts. Each sample reads /proc for the container's process group: CPU time
// (utime + stime of the live members, turned into cores used since the previous sample) and
// resident memory (RSS summed over the members). History is bounded per container and in the
// number of containers kept.
// Thread safety: every method may be called from any thread; Start runs a sampling thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct ResourceSample {
  Time time{};
  double cpu_cores = 0;        // CPU time per wall time since the previous sample of that pid
  std::int64_t rss_bytes = 0;  // resident set of the process group
  Pid pid = 0;                 // the group's leader (a restarted container has a new one)
};

struct ResourceSamplerOptions {
  Duration interval = std::chrono::seconds(1);
  std::size_t max_samples = 1800;    // per container (30 minutes at 1 s)
  std::size_t max_containers = 512;  // the least recently sampled are dropped beyond it
};

class ResourceSampler {
 public:
  // The running processes as (pid, ProcessSpec::name "<ns>/<pod>/<container>").
  using Lister = std::function<std::vector<std::pair<Pid, std::string>>()>;

  ResourceSampler(const Clock& clock, Lister lister, ResourceSamplerOptions options = {});
  ~ResourceSampler();  // Stop()
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Samples every options.interval on a thread of its own until Stop.
  void Start();
  void Stop();
  // Takes one sample of every listed process group now.
  void SampleOnce();
  // Samples of the containers whose name starts with `name_prefix` ("ns/pod/"), keyed by the
  // rest of the name (the container), oldest first.
  std::map<std::string, std::vector<ResourceSample>> Samples(const std::string& name_prefix) const;

 private:
  struct Series {
    std::vector<ResourceSample> samples;  // ring: oldest first after trimming
    std::int64_t last_ticks = -1;
    Time last_time{};
  };

  const Clock& clock_;
  Lister lister_;
  ResourceSamplerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;  // GUARDED_BY(mu_)
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace pjemu::process
