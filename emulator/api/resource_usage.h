// ResourceUsage: what a node's containers use, as the kubelet's stats (the Summary API) give it
// to metrics-server: per container, CPU in nanocores averaged over a window and the memory
// working set in bytes, read at a timestamp. The API server's metrics.k8s.io
// (emulator/apiserver/metrics_api.h) serves PodMetrics and NodeMetrics from it; the cluster
// feeds it from its process sampler today (RSS as the working set), and cgroup figures can feed
// it the same way.
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"

namespace pjemu::api {

struct ContainerUsage {
  std::string name;
  std::int64_t cpu_nanocores = 0;
  std::int64_t memory_bytes = 0;  // working set
};

struct UsageReading {
  Time timestamp{};     // the end of the window
  Duration window{};    // what the CPU figure averages over
  std::vector<ContainerUsage> containers;  // node readings: one entry, the node's total
};

class ResourceUsage {
 public:
  virtual ~ResourceUsage() = default;
  // The running containers of pod ns/name; nullopt when there are no figures (not running, or
  // not sampled yet).
  virtual std::optional<UsageReading> Pod(const std::string& ns, const std::string& name) const = 0;
  // The node as a whole (what its cgroup root or the host reports); nullopt when unknown.
  virtual std::optional<UsageReading> Node(const std::string& node_name) const = 0;
};

}  // namespace pjemu::api
