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

void ResourceSampler::SampleOnce() {
  std::vector<std::pair<Pid, std::string>> live = lister_();
  std::set<pid_t> groups;
  for (const auto& [pid, name] : live) groups.insert(pid);
  std::map<pid_t, GroupUsage> usage = UsageByGroup(groups);
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
