// ResourceSampler: CPU and memory use over time of every running container, for the web
// console's resource charts. Each sample reads /proc for the container's process group: CPU time
// (utime + stime of the live members, turned into cores used since the previous sample) and
// resident memory (RSS summed over the members). History is bounded per container and in the
// number of containers kept. With a GPU source (ResourceSamplerOptions::gpu, NVML's when the
// driver is there) each sample also carries the group's GPU memory and utilisation: the figures
// of the pids whose process group is the container's.
// Thread safety: every method may be called from any thread; Start runs a sampling thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/process/gpu_usage.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct ResourceSample {
  Time time{};
  double cpu_cores = 0;        // CPU time per wall time since the previous sample of that pid
  std::int64_t rss_bytes = 0;  // resident set of the process group
  Pid pid = 0;                 // the group's leader (a restarted container has a new one)
  // GPU figures of the group (gpu_usage.h), -1 when there is no GPU source.
  double gpu_util_percent = -1;
  std::int64_t gpu_memory_bytes = -1;
};

struct ResourceSamplerOptions {
  Duration interval = std::chrono::seconds(1);
  std::size_t max_samples = 1800;    // per container (30 minutes at 1 s)
  std::size_t max_containers = 512;  // the least recently sampled are dropped beyond it
  // GPU use by host pid (NvmlGpuUsage::ByProcess); null: no GPU figures.
  std::function<std::map<Pid, GpuProcessUse>()> gpu;
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

  // options_.gpu's figures summed per process group, for the groups listed.
  std::map<Pid, GpuProcessUse> GpuByGroup(const std::set<Pid>& groups) const;

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
