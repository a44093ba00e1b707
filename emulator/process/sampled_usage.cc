#include "emulator/process/sampled_usage.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace pjemu::process {
namespace {

std::int64_t MemoryInUse() {  // MemTotal - MemAvailable, bytes
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t value = 0, total = -1, available = -1;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") available = value * 1024;
  }
  return total >= 0 && available >= 0 ? total - available : 0;
}

}  // namespace

SampledUsage::SampledUsage(const ResourceSampler& sampler, const Clock& clock, Duration interval,
                           Duration max_window)
    : sampler_(sampler), clock_(clock), interval_(interval), max_window_(max_window),
      previous_(ReadHostTicks(clock.Now())) {}

std::optional<api::UsageReading> SampledUsage::FromSamples(
    const std::vector<ResourceSample>& samples, Time now, Duration interval, Duration max_window) {
  if (samples.empty() || now - samples.back().time > 3 * interval) return std::nullopt;
  const ResourceSample& last = samples.back();
  // The current process's samples within the window, newest first; the oldest one kept is the
  // window's start (its own CPU figure covers the time before it).
  std::size_t first = samples.size() - 1;
  while (first > 0 && samples[first - 1].pid == last.pid &&
         last.time - samples[first - 1].time <= max_window) {
    --first;
  }
  if (first == samples.size() - 1) return std::nullopt;  // one sample: no rate yet
  double core_seconds = 0;
  for (std::size_t i = first + 1; i < samples.size(); ++i) {
    core_seconds += samples[i].cpu_cores *
                    std::chrono::duration<double>(samples[i].time - samples[i - 1].time).count();
  }
  api::UsageReading r;
  r.timestamp = last.time;
  r.window = last.time - samples[first].time;
  const double seconds = std::chrono::duration<double>(r.window).count();
  api::ContainerUsage c;
  c.cpu_nanocores = static_cast<std::int64_t>(std::llround(core_seconds / seconds * 1e9));
  c.memory_bytes = last.memory_bytes;
  r.containers.push_back(c);
  return r;
}

std::optional<api::UsageReading> SampledUsage::Pod(const std::string& ns,
                                                   const std::string& name) const {
  const Time now = clock_.Now();
  std::optional<api::UsageReading> out;
  for (const auto& [container, samples] : sampler_.Samples(ns + "/" + name + "/")) {
    auto r = FromSamples(samples, now, interval_, max_window_);
    if (!r) continue;
    r->containers.front().name = container;
    if (!out) {
      out = std::move(r);
      continue;
    }
    // One timestamp and window for the pod: the latest end, the shortest window.
    out->timestamp = std::max(out->timestamp, r->timestamp);
    out->window = std::min(out->window, r->window);
    out->containers.push_back(r->containers.front());
  }
  return out;
}

SampledUsage::HostTicks SampledUsage::ReadHostTicks(Time now) {
  std::ifstream in("/proc/stat");
  std::string line;
  HostTicks t;
  t.time = now;
  if (!std::getline(in, line) || line.rfind("cpu ", 0) != 0) return t;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
  std::int64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (auto& x : v) fields >> x;
  t.total = 0;
  for (auto x : v) t.total += x;
  t.busy = t.total - v[3] - v[4];
  return t;
}

std::optional<api::UsageReading> SampledUsage::Node(const std::string&) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Time now = clock_.Now();
  if (node_ && now - node_->timestamp < std::chrono::seconds(1)) return node_;
  if (now - previous_.time < std::chrono::seconds(1)) return node_;  // too short a window yet
  HostTicks current = ReadHostTicks(now);
  if (current.busy < 0 || previous_.busy < 0) return std::nullopt;
  static const double kTicksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  api::UsageReading r;
  r.timestamp = now;
  r.window = now - previous_.time;
  const double seconds = std::chrono::duration<double>(r.window).count();
  api::ContainerUsage total;
  total.name = "node";
  total.cpu_nanocores = static_cast<std::int64_t>(
      std::llround((current.busy - previous_.busy) / kTicksPerSecond / seconds * 1e9));
  total.memory_bytes = MemoryInUse();
  r.containers.push_back(total);
  previous_ = current;
  node_ = r;
  return node_;
}

}  // namespace pjemu::process
