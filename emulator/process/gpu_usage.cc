#include "emulator/process/gpu_usage.h"

#include <dlfcn.h>

#include <chrono>
#include <vector>

namespace pjemu::process {
namespace {

// The few NVML declarations used, as nvml.h declares them (the header is not a Debian package
// here; the ABI of these entry points is stable across drivers).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned long long kValueNotAvailable = ~0ULL;

// nvmlProcessInfo_t (the _v2 and _v3 calls).
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

// nvmlProcessUtilizationSample_t.
struct UtilSample {
  unsigned int pid;
  unsigned long long time_stamp;  // microseconds
  unsigned int sm_util;
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};

}  // namespace

struct NvmlGpuUsage::Api {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, ProcessInfo*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, UtilSample*, unsigned int*,
                              unsigned long long) = nullptr;
  std::vector<nvmlDevice_t> devices;
  std::vector<unsigned long long> last_seen;  // per device: the newest sample read
};

namespace {

template <typename F>
bool Bind(void* lib, F& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* p = dlsym(lib, name)) {
      fn = reinterpret_cast<F>(p);
      return true;
    }
  }
  return false;
}

}  // namespace

std::unique_ptr<NvmlGpuUsage> NvmlGpuUsage::Open() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return nullptr;
  auto api = std::make_unique<Api>();
  api->lib = lib;
  const bool bound =
      Bind(lib, api->init, {"nvmlInit_v2", "nvmlInit"}) &&
      Bind(lib, api->shutdown, {"nvmlShutdown"}) &&
      Bind(lib, api->count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}) &&
      Bind(lib, api->handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}) &&
      Bind(lib, api->processes,
           {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  Bind(lib, api->utilization, {"nvmlDeviceGetProcessUtilization"});  // optional
  if (!bound || api->init() != kSuccess) {
    dlclose(lib);
    return nullptr;
  }
  unsigned int n = 0;
  if (api->count(&n) == kSuccess) {
    for (unsigned int i = 0; i < n; ++i) {
      nvmlDevice_t d = nullptr;
      if (api->handle(i, &d) == kSuccess) api->devices.push_back(d);
    }
  }
  api->last_seen.assign(api->devices.size(), 0);
  if (api->devices.empty()) {
    api->shutdown();
    dlclose(lib);
    return nullptr;
  }
  return std::unique_ptr<NvmlGpuUsage>(new NvmlGpuUsage(std::move(api)));
}

NvmlGpuUsage::NvmlGpuUsage(std::unique_ptr<Api> api) : api_(std::move(api)) {}

NvmlGpuUsage::~NvmlGpuUsage() {
  api_->shutdown();
  dlclose(api_->lib);
}

std::map<Pid, GpuProcessUse> NvmlGpuUsage::ByProcess() {
  std::map<Pid, GpuProcessUse> out;
  for (size_t d = 0; d < api_->devices.size(); ++d) {
    std::vector<ProcessInfo> infos(64);
    unsigned int n = static_cast<unsigned int>(infos.size());
    nvmlReturn_t r = api_->processes(api_->devices[d], &n, infos.data());
    if (r == kInsufficientSize) {
      infos.resize(n + 16);
      n = static_cast<unsigned int>(infos.size());
      r = api_->processes(api_->devices[d], &n, infos.data());
    }
    if (r != kSuccess) continue;
    for (unsigned int i = 0; i < n && i < infos.size(); ++i) {
      GpuProcessUse& use = out[static_cast<Pid>(infos[i].pid)];
      if (infos[i].used_gpu_memory != kValueNotAvailable) {
        use.memory_bytes += static_cast<std::int64_t>(infos[i].used_gpu_memory);
      }
    }
    if (api_->utilization == nullptr) continue;
    std::vector<UtilSample> samples(256);
    unsigned int m = static_cast<unsigned int>(samples.size());
    if (api_->utilization(api_->devices[d], samples.data(), &m, api_->last_seen[d]) != kSuccess) {
      continue;  // NOT_FOUND: no sample since the last read
    }
    std::map<Pid, UtilSample> newest;
    for (unsigned int i = 0; i < m && i < samples.size(); ++i) {
      UtilSample& s = newest[static_cast<Pid>(samples[i].pid)];
      if (samples[i].time_stamp >= s.time_stamp) s = samples[i];
      if (samples[i].time_stamp > api_->last_seen[d]) api_->last_seen[d] = samples[i].time_stamp;
    }
    for (const auto& [pid, s] : newest) {
      auto it = out.find(pid);
      if (it != out.end()) it->second.util_percent += s.sm_util;
    }
  }
  return out;
}

}  // namespace pjemu::process
