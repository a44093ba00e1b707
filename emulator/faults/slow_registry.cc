#include "emulator/faults/slow_registry.h"

#include <fnmatch.h>

namespace pjemu::faults {
namespace {

bool Glob(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace

Duration SlowRegistry::PullTime(const std::string& image, const kubelet::ImagePlan& plan) {
  const std::pair<std::string, Duration>* match = nullptr;
  for (const auto& entry : delays_) {
    if (Glob(entry.first, image) || Glob(entry.first, plan.normalized)) match = &entry;
  }
  if (match == nullptr) return inner_.PullTime(image, plan);
  if (match->second <= Duration(0) || pulled_.count(plan.normalized)) return Duration(0);
  return match->second;
}

void SlowRegistry::Pulled(const std::string& normalized) {
  pulled_.insert(normalized);
  inner_.Pulled(normalized);
}

void SlowRegistry::SetDelay(const std::string& glob, Duration delay) {
  delays_.emplace_back(glob, delay);
  std::erase_if(pulled_, [&](const std::string& image) { return Glob(glob, image); });
}

}  // namespace pjemu::faults
