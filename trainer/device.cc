#include "trainer/device.h"

#include <ATen/Context.h>
#include <c10/core/Device.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <charconv>

#include "trainer/build_config.h"

namespace pjemu::trainer {
namespace {

Status NcclNeedsCuda(const std::string& cause) {
  return Status(Code::kInvalid, "--backend nccl needs a CUDA device: " + cause);
}

// Why no CUDA device is usable, most actionable cause first.
std::string NoDeviceCause(const CudaProbe& probe, bool no_cuda, const EnvLookup& env) {
  if (no_cuda) return "--no-cuda was given";
  const std::optional<std::string> visible = env("CUDA_VISIBLE_DEVICES");
  if (visible && visible->empty()) {
    return "no GPU visible to this pod (CUDA_VISIBLE_DEVICES is empty: the container asks for "
           "no nvidia.com/gpu)";
  }
  if (!probe.built_with_cuda) {
    return "this LibTorch " + probe.torch_version +
           " was built without CUDA (build pjemu-trainer against a Torch with CUDA)";
  }
  if (visible) return "CUDA_VISIBLE_DEVICES=" + *visible + " leaves no usable GPU visible";
  return "no GPU visible to this process (the driver reports no CUDA device)";
}

}  // namespace

Result<DeviceChoice> ChooseDevice(const CudaProbe& probe, bool no_cuda, const std::string& backend,
                                  const EnvLookup& env) {
  const bool nccl = backend == "nccl";
  DeviceChoice choice;
  choice.cuda = !no_cuda && probe.built_with_cuda && probe.device_count > 0;
  if (!choice.cuda) {
    if (nccl) return NcclNeedsCuda(NoDeviceCause(probe, no_cuda, env));
    return choice;
  }
  const std::optional<std::string> local = env("LOCAL_RANK");
  if (!local) return choice;
  int index = -1;
  auto [p, ec] = std::from_chars(local->data(), local->data() + local->size(), index);
  if (ec != std::errc() || p != local->data() + local->size() || index < 0) {
    return Status(Code::kInvalid, "env LOCAL_RANK=\"" + *local + "\" is not an integer >= 0");
  }
  if (index >= probe.device_count) {
    if (nccl) {
      const std::optional<std::string> visible = env("CUDA_VISIBLE_DEVICES");
      return NcclNeedsCuda("LOCAL_RANK=" + *local + " but " + std::to_string(probe.device_count) +
                           " GPU(s) visible" +
                           (visible ? " (CUDA_VISIBLE_DEVICES=" + *visible + ")" : std::string()) +
                           "; NCCL takes one rank per GPU");
    }
    index %= probe.device_count;
  }
  choice.index = index;
  return choice;
}

CudaProbe ProbeCuda() {
  CudaProbe probe;
  // build_config.h defines PJEMU_TRAINER_TORCH_CUDA when the Torch package has its CUDA library
  // (torch_cuda); at::hasCUDA alone is also false for a CUDA build on a machine without GPUs.
#if defined(PJEMU_TRAINER_TORCH_CUDA)
  probe.built_with_cuda = true;
#else
  probe.built_with_cuda = at::hasCUDA();
#endif
  probe.device_count = probe.built_with_cuda && torch::cuda::is_available()
                           ? static_cast<int>(torch::cuda::device_count())
                           : 0;
  probe.torch_version = TORCH_VERSION;
  return probe;
}

void UseDevice(const DeviceChoice& choice) {
  if (!choice.cuda) return;
  c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
      ->setDevice(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(choice.index)));
}

}  // namespace pjemu::trainer
