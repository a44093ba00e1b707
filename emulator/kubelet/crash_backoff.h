// CrashBackoff: the kubelet's CrashLoopBackOff timing (pkg/util/flowcontrol.Backoff as the
// kubelet uses it). The first restart of a container is immediate; each later one waits
// 10 s, 20 s, 40 s ... capped at 5 min; an entry whose last restart is more than 2 x 5 min
// before the new failure (the container ran 10 min) starts over. `scale` shrinks every
// duration for tests (0.01 gives 100 ms, 200 ms, ... 3 s).
// Thread safety: not thread-safe; the kubelet uses it on the EventLoop thread.
#pragma once

#include <map>
#include <string>

#include "emulator/common/clock.h"

namespace pjemu::kubelet {

class CrashBackoff {
 public:
  explicit CrashBackoff(double scale = 1.0, Duration initial = 10s, Duration max = 300s);

  // A container (key: "<pod uid>/<container>") finished at `finished` and will be restarted:
  // the delay before the restart. Records the restart as happening after that delay.
  Duration NextDelay(const std::string& key, Time finished);
  // Forgets a key (the pod is gone).
  void Forget(const std::string& key) { entries_.erase(key); }

  Duration initial() const { return initial_; }
  Duration max() const { return max_; }

 private:
  struct Entry {
    Duration backoff;
    Time last_update;
  };
  Duration initial_;
  Duration max_;
  std::map<std::string, Entry> entries_;
};

}  // namespace pjemu::kubelet
