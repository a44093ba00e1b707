// The node's GPUs as the NVIDIA device plugin offers them: each physical GPU is `replicas`
// schedulable nvidia.com/gpu units (time-slicing, `--gpu-sharing N`; 1 = no sharing). Slot s is
// replica s % replicas of GPU s / replicas. Allocation follows the plugin's preferred
// allocation for replicated GPUs: each unit from the GPU with the fewest units taken (lowest
// index on a tie), so pods spread over the GPUs before two share one; a pod's
// CUDA_VISIBLE_DEVICES lists the physical GPUs of its units, each once, in order.
// Thread safety: none; the kubelet's loop thread owns a GpuSlots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pjemu::kubelet {

class GpuSlots {
 public:
  GpuSlots() = default;
  // `machine`: the machine's index of each of the node's GPUs (empty = 0..gpus-1).
  GpuSlots(int gpus, int replicas, std::vector<int> machine = {});

  int gpus() const { return gpus_; }
  int replicas() const { return replicas_; }
  // nvidia.com/gpu capacity: gpus x replicas.
  int64_t units() const { return static_cast<int64_t>(owner_.size()); }

  // Takes up to `want` free units for `uid`; returns the slots taken (fewer when the node has
  // fewer free: the scheduler's fit check keeps that from happening).
  std::vector<int> Allocate(const std::string& uid, int64_t want);
  // Frees every unit `uid` holds.
  void Release(const std::string& uid);
  // "0", "0,1": the machine's GPUs of `slots`, each once, ascending.
  std::string VisibleDevices(const std::vector<int>& slots) const;
  // The machine's GPUs of `slots`, each once, ascending.
  std::vector<int> PhysicalIndices(const std::vector<int>& slots) const;

 private:
  int gpus_ = 0;
  int replicas_ = 1;
  std::vector<std::string> owner_;  // slot -> pod uid ("" = free)
  std::vector<int> machine_;        // node GPU -> machine GPU index (empty = identity)
};

}  // namespace pjemu::kubelet
