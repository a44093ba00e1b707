// SampledUsage: api::ResourceUsage (what metrics.k8s.io serves) from the ResourceSampler's
// per-container samples and the host's /proc, until cgroups give the kubelet's own figures.
//  - a container: CPU averaged over its samples of the last `window` (at most 15 s, metrics-
//    server's resolution) of its current process, memory the last sample's RSS (standing in
//    for the cgroup's working set); a container whose last sample is older than three sampling
//    intervals has ended and is left out, one with a single sample has no CPU figure yet;
//  - the node: the host as a whole, since the node is the host: CPU from /proc/stat (non-idle
//    time of every CPU) since the previous reading (at least a second apart), memory
//    MemTotal - MemAvailable from /proc/meminfo.
// Thread safety: safe from any thread (the sampler is; the node reading has its own mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "emulator/api/resource_usage.h"
#include "emulator/common/clock.h"
#include "emulator/process/resource_sampler.h"

namespace pjemu::process {

class SampledUsage final : public api::ResourceUsage {
 public:
  // `sampler` and `clock` must outlive this; `interval` is the sampler's.
  SampledUsage(const ResourceSampler& sampler, const Clock& clock, Duration interval,
               Duration max_window = std::chrono::seconds(15));

  std::optional<api::UsageReading> Pod(const std::string& ns,
                                       const std::string& name) const override;
  std::optional<api::UsageReading> Node(const std::string& node_name) const override;

  // A container's reading from its samples (oldest first) at `now`; nullopt as described above.
  static std::optional<api::UsageReading> FromSamples(const std::vector<ResourceSample>& samples,
                                                      Time now, Duration interval,
                                                      Duration max_window);

 private:
  struct HostTicks {
    Time time{};
    std::int64_t busy = -1;
    std::int64_t total = 0;
  };
  static HostTicks ReadHostTicks(Time now);

  const ResourceSampler& sampler_;
  const Clock& clock_;
  Duration interval_;
  Duration max_window_;
  mutable std::mutex mu_;
  mutable HostTicks previous_;                       // GUARDED_BY(mu_)
  mutable std::optional<api::UsageReading> node_;    // GUARDED_BY(mu_): the last figure
};

}  // namespace pjemu::process
