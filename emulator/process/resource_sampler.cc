#include "emulator/process/resource_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "emulator/process/proc_stats.h"

namespace pjemu::process {

ResourceSampler::ResourceSampler(const Clock& clock, Lister lister, ResourceSamplerOptions options)
    : clock_(clock), lister_(std::move(lister)), options_(options) {}

ResourceSampler::~ResourceSampler() { Stop(); }

void ResourceSampler::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      SampleOnce();
      lock.lock();
      cv_.wait_for(lock, options_.interval, [this] { return stop_; });
    }
  });
}

void ResourceSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

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
  std::set<pid_t> groups;
  for (const auto& [pid, name] : live) groups.insert(pid);
  std::map<pid_t, GroupUsage> usage = UsageByGroup(groups);
  std::map<Pid, GpuProcessUse> gpu = GpuByGroup(groups);
  static const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [pid, name] : live) {
    auto it = usage.find(pid);
    // Exited between the listing and the read (a live process always has some RSS).
    if (it == usage.end() || it->second.rss_bytes == 0) continue;
    Series& series = series_[name];
    ResourceSample sample;
    sample.time = now;
    sample.pid = pid;
    sample.rss_bytes = it->second.rss_bytes;
    if (options_.gpu) {
      auto g = gpu.find(pid);
      sample.gpu_util_percent = g == gpu.end() ? 0 : g->second.util_percent;
      sample.gpu_memory_bytes = g == gpu.end() ? 0 : g->second.memory_bytes;
    }
    bool same_pid = !series.samples.empty() && series.samples.back().pid == pid;
    if (same_pid && series.last_ticks >= 0 && now > series.last_time) {
      double cpu_seconds = (it->second.cpu_ticks - series.last_ticks) / kTicksPerSecond;
      double wall_seconds = std::chrono::duration<double>(now - series.last_time).count();
      // Members that exited take their CPU time with them: never report a negative rate.
      sample.cpu_cores = std::max(0.0, cpu_seconds / wall_seconds);
    }
    series.last_ticks = it->second.cpu_ticks;
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
