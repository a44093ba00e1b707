// GPU use per process from NVIDIA's management library, loaded at run time: dlopen of
// libnvidia-ml.so.1 (the driver's, present wherever an NVIDIA driver is installed), so pjemu
// neither links nor needs it; without the library, without a driver or without GPUs Open()
// answers null and nothing GPU-related is shown anywhere. Per process: the device memory it holds
// (summed over GPUs) and its SM utilisation in percent (NVML's latest per-process sample, summed
// over GPUs; 0 for a process holding memory but without a sample since the last read).
// Flow: ResourceSampler (ResourceSamplerOptions::gpu) -> the console's resource charts.
// Thread safety: ByProcess may be called from one thread at a time (the sampler's).
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct GpuProcessUse {
  std::int64_t memory_bytes = 0;  // device memory held, all GPUs together
  double util_percent = 0;        // SM utilisation, all GPUs together
};

class NvmlGpuUsage {
 public:
  // The library loaded and initialised with at least one GPU; null otherwise (no message: a
  // machine without NVIDIA GPUs is the normal case).
  static std::unique_ptr<NvmlGpuUsage> Open();
  ~NvmlGpuUsage();  // nvmlShutdown, dlclose
  NvmlGpuUsage(const NvmlGpuUsage&) = delete;
  NvmlGpuUsage& operator=(const NvmlGpuUsage&) = delete;

  // The processes using a GPU now, by host pid (pjemu's containers share the host's pids).
  std::map<Pid, GpuProcessUse> ByProcess();

 private:
  struct Api;
  explicit NvmlGpuUsage(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace pjemu::process
