// Where pjemu-trainer computes, decided as the reference mnist.py does: CUDA when LibTorch sees a
// CUDA device and --no-cuda is not given ("Using CUDA"), else the CPU. The device index is
// LOCAL_RANK (torchrun's, one GPU per local process) or 0, counted within the GPUs that
// CUDA_VISIBLE_DEVICES leaves visible (the kubelet's device plugin sets it per pod).
// --backend nccl needs CUDA: without a visible device the choice fails before any rendezvous,
// naming the cause, as a non-retryable kInvalid (exit 2: a restart cannot give the pod a GPU).
// Flow: main.cc -> ProbeCuda + ChooseDevice -> UseDevice -> RunTraining. Thread safety:
// ChooseDevice is pure; ProbeCuda and UseDevice call into LibTorch, from main only.
#pragma once

#include <string>

#include "trainer/dist_env.h"
#include "trainer/status.h"

namespace pjemu::trainer {

// What this process's LibTorch reports about CUDA.
struct CudaProbe {
  bool built_with_cuda = false;  // a LibTorch with CUDA (libtorch_cuda loaded)
  int device_count = 0;          // CUDA devices visible to this process
  std::string torch_version;     // for the error message, e.g. "1.13.0"
};

struct DeviceChoice {
  bool cuda = false;
  int index = 0;  // within the visible devices; 0 on the CPU
};

// Pure: the device for this run. kInvalid (one line) when --backend nccl cannot have a CUDA
// device, or when LOCAL_RANK is not an integer >= 0 or, with nccl, names a device not visible.
// With gloo, LOCAL_RANK beyond the visible devices shares them round-robin (gloo takes several
// ranks on one GPU; NCCL refuses them).
Result<DeviceChoice> ChooseDevice(const CudaProbe& probe, bool no_cuda, const std::string& backend,
                                  const EnvLookup& env);

// The running LibTorch's answers (torch::cuda::is_available, device_count, at::hasCUDA).
CudaProbe ProbeCuda();

// Makes the choice the current device of the calling thread for the rest of the process (a
// no-op on the CPU).
void UseDevice(const DeviceChoice& choice);

}  // namespace pjemu::trainer
