#include "emulator/kubelet/crash_backoff.h"

#include <algorithm>

namespace pjemu::kubelet {
namespace {
Duration Scale(Duration d, double scale) {
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::nano>(static_cast<double>(d.count()) * scale));
}
}  // namespace

CrashBackoff::CrashBackoff(double scale, Duration initial, Duration max)
    : initial_(Scale(initial, scale)), max_(Scale(max, scale)) {}

Duration CrashBackoff::NextDelay(const std::string& key, Time finished) {
  auto it = entries_.find(key);
  if (it == entries_.end() || finished - it->second.last_update > 2 * max_) {
    // Like Backoff.Next on a new or expired entry: restart now, next time wait `initial`.
    entries_[key] = Entry{initial_, finished};
    return Duration(0);
  }
  Entry& e = it->second;
  Duration delay = e.backoff;
  e.last_update = finished + delay;
  e.backoff = std::min(e.backoff * 2, max_);
  return delay;
}

}  // namespace pjemu::kubelet
