#include "emulator/process/resource_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "emulator/process/proc_stats.h"

namespace pjemu::process {

ResourceSampler::ResourceSampler(const Clock& clock, Lister lister, ResourceSamplerOptions options,
                                 CgroupReader cgroups)
    : clock_(clock), lister_(std::move(lister)), options_(options), cgroups_(std::move(cgroups)) {}

ResourceSampler::~ResourceSampler() { Stop(); }

void ResourceSampler::Start() {
  sampling_.Start(options_.interval, [this] { SampleOnce(); });
}

void ResourceSampler::Stop() { sampling_.Stop(); }

std::map<Pid, GpuProcessUse> ResourceSampler::GpuByGroup(const std::set<Pid>& groups) const {
  std::map<Pid, GpuProcessUse> out;
  if (!options_.gpu) return out;
  for (const auto& [pid, use] : options_.gpu()) {
    const Pid group = getpgid(pid);
    if (group < 0 || groups.count(group) == 0) continue;
    out[group].memory_bytes += use.memory_bytes;
    out[group].util_percent += use.util_percent;
  }
  return out;
}

void ResourceSampler::SampleOnce() {
  std::vector<std::pair<Pid, std::string>> live = lister_();
  // Per pid: cumulative CPU ns and memory bytes, from the cgroup or else /proc.
  struct Reading {
    std::int64_t cpu_ns = 0;
    std::int64_t memory = 0;
    bool cgroup = false;
  };
  std::map<pid_t, Reading> readings;
  std::set<pid_t> groups;
  std::set<Pid> containers;
  for (const auto& [pid, name] : live) {
    containers.insert(pid);
    std::optional<CgroupUsage> cg = cgroups_ ? cgroups_(pid) : std::nullopt;
    if (cg) {
      readings[pid] = {cg->cpu_usage_ns, cg->working_set_bytes, true};
    } else {
      groups.insert(pid);
    }
  }
  static const std::int64_t kNsPerTick = 1000000000 / sysconf(_SC_CLK_TCK);
  for (const auto& [pgid, usage] : UsageByGroup(groups)) {
    // A live process always has some RSS: none means it exited between listing and reading.
    if (usage.rss_bytes > 0)
      readings[pgid] = {usage.cpu_ticks * kNsPerTick, usage.rss_bytes, false};
  }
  std::map<Pid, GpuProcessUse> gpu = GpuByGroup(containers);
  Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [pid, name] : live) {
    auto it = readings.find(pid);
    if (it == readings.end()) continue;
    Series& series = series_[name];
    ResourceSample sample;
    sample.time = now;
    sample.pid = pid;
    sample.memory_bytes = it->second.memory;
    sample.from_cgroup = it->second.cgroup;
    if (options_.gpu) {
      auto g = gpu.find(pid);
      sample.gpu_util_percent = g == gpu.end() ? 0 : g->second.util_percent;
      sample.gpu_memory_bytes = g == gpu.end() ? 0 : g->second.memory_bytes;
    }
    bool same_pid = !series.samples.empty() && series.samples.back().pid == pid;
    if (same_pid && series.last_cpu_ns >= 0 && now > series.last_time) {
      double cpu_seconds = static_cast<double>(it->second.cpu_ns - series.last_cpu_ns) / 1e9;
      double wall_seconds = std::chrono::duration<double>(now - series.last_time).count();
      // Members that exited take their CPU time with them: never report a negative rate.
      sample.cpu_cores = std::max(0.0, cpu_seconds / wall_seconds);
    }
    series.last_cpu_ns = it->second.cpu_ns;
    series.last_time = now;
    series.samples.push_back(sample);
    if (series.samples.size() > options_.max_samples) {
      series.samples.erase(
          series.samples.begin(),
          series.samples.begin() +
              static_cast<std::ptrdiff_t>(series.samples.size() - options_.max_samples));
    }
  }
  while (series_.size() > options_.max_containers) {
    auto oldest = series_.begin();
    for (auto it = series_.begin(); it != series_.end(); ++it) {
      if (it->second.last_time < oldest->second.last_time) oldest = it;
    }
    series_.erase(oldest);
  }
}

std::map<std::string, ResourceSample> ResourceSampler::Latest(
    const std::string& name_prefix) const {
  std::map<std::string, ResourceSample> out;
  Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = series_.lower_bound(name_prefix);
       it != series_.end() && it->first.rfind(name_prefix, 0) == 0; ++it) {
    const auto& samples = it->second.samples;
    if (samples.size() < 2 || now - samples.back().time > 2 * options_.interval) continue;
    if (samples[samples.size() - 2].pid != samples.back().pid) continue;
    out[it->first.substr(name_prefix.size())] = samples.back();
  }
  return out;
}

std::map<std::string, std::vector<ResourceSample>> ResourceSampler::Samples(
    const std::string& name_prefix) const {
  std::map<std::string, std::vector<ResourceSample>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = series_.lower_bound(name_prefix);
       it != series_.end() && it->first.rfind(name_prefix, 0) == 0; ++it) {
    out[it->first.substr(name_prefix.size())] = it->second.samples;
  }
  return out;
}

}  // namespace pjemu::process
