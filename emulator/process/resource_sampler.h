// ResourceSampler: CPU and memory use over time of every running container, for the web
// console's resource charts and the metrics API (Latest). Each sample reads the container's
// cgroup when the runner gave it one (CgroupReader: cumulative CPU time, and the working set as
// cAdvisor and metrics-server compute it), else /proc for its process group (utime + stime of
// the live members, RSS summed over them). CPU time is turned into cores used since the
// previous sample. History is bounded per container and in the number of containers kept.
// With a GPU source (ResourceSamplerOptions::gpu, NVML's when the driver is there) each sample
// also carries the group's GPU memory and utilisation: the figures of the pids whose process
// group is the container's.
// Thread safety: every method may be called from any thread; Start runs a sampling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/periodic_thread.h"
#include "emulator/process/cgroups.h"
#include "emulator/process/gpu_usage.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct ResourceSample {
  Time time{};
  double cpu_cores = 0;           // CPU time per wall time since the previous sample of that pid
                                  // (metrics.k8s.io's usage.cpu is cpu_cores x 1e9 nanocores)
  std::int64_t memory_bytes = 0;  // the cgroup's working set (usage - inactive file), or the
                                  // group's resident set without a cgroup
  bool from_cgroup = false;       // memory_bytes and cpu_cores are the cgroup's
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
  // The kernel's figures for a process's cgroup (PosixProcessRunner::CgroupUsageOf); nullopt
  // reads /proc instead.
  using CgroupReader = std::function<std::optional<CgroupUsage>(Pid)>;

  ResourceSampler(const Clock& clock, Lister lister, ResourceSamplerOptions options = {},
                  CgroupReader cgroups = nullptr);
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
  // The newest sample of each running container whose name starts with `name_prefix`
  // ("ns/pod/" for a pod, "" for all), keyed by the rest of the name: the per-pod usage
  // snapshot a metrics API serves (PodMetrics: usage.cpu from cpu_cores, usage.memory from
  // memory_bytes; window = options.interval). A container whose newest sample is older than two
  // intervals (exited) is left out, and so is one sampled once (its CPU rate is not known yet).
  std::map<std::string, ResourceSample> Latest(const std::string& name_prefix) const;
  Duration interval() const { return options_.interval; }

 private:
  struct Series {
    std::vector<ResourceSample> samples;  // ring: oldest first after trimming
    std::int64_t last_cpu_ns = -1;
    Time last_time{};
  };

  // options_.gpu's figures summed per process group, for the groups listed.
  std::map<Pid, GpuProcessUse> GpuByGroup(const std::set<Pid>& groups) const;

  const Clock& clock_;
  Lister lister_;
  ResourceSamplerOptions options_;
  CgroupReader cgroups_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;  // GUARDED_BY(mu_)
  PeriodicThread sampling_;  // last member: stopped (joined) before the others go
};

}  // namespace pjemu::process
