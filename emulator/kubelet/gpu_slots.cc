#include "emulator/kubelet/gpu_slots.h"

#include <algorithm>
#include <set>

namespace pjemu::kubelet {

GpuSlots::GpuSlots(int gpus, int replicas, std::vector<int> machine)
    : gpus_(machine.empty() ? std::max(gpus, 0) : static_cast<int>(machine.size())),
      replicas_(std::max(replicas, 1)),
      owner_(static_cast<size_t>(gpus_) * replicas_),
      machine_(std::move(machine)) {}

std::vector<int> GpuSlots::Allocate(const std::string& uid, int64_t want) {
  std::vector<int> taken;
  std::vector<int> used(gpus_, 0);  // units taken per physical GPU
  for (size_t s = 0; s < owner_.size(); ++s) {
    if (!owner_[s].empty()) ++used[s / replicas_];
  }
  for (; want > 0; --want) {
    int best = -1;
    for (int g = 0; g < gpus_; ++g) {
      if (used[g] < replicas_ && (best < 0 || used[g] < used[best])) best = g;
    }
    if (best < 0) break;
    for (int r = 0; r < replicas_; ++r) {
      const int s = best * replicas_ + r;
      if (owner_[s].empty()) {
        owner_[s] = uid;
        taken.push_back(s);
        ++used[best];
        break;
      }
    }
  }
  return taken;
}

void GpuSlots::Release(const std::string& uid) {
  for (auto& owner : owner_) {
    if (owner == uid) owner.clear();
  }
}

std::vector<int> GpuSlots::PhysicalIndices(const std::vector<int>& slots) const {
  std::set<int> physical;
  for (int s : slots) {
    const int g = s / replicas_;
    physical.insert(machine_.empty() ? g : machine_[g]);
  }
  return {physical.begin(), physical.end()};
}

std::string GpuSlots::VisibleDevices(const std::vector<int>& slots) const {
  std::string out;
  for (int g : PhysicalIndices(slots)) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

}  // namespace pjemu::kubelet
