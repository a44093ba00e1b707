// The reconcile vocabulary shared by the controller's parts (controller-runtime's shape):
// a Request names one object, a Reconciler acts on it level-based (re-reads the cluster state,
// never acts on the event that woke it) and says when to look again.
// Thread safety: plain values; Reconcile is called on the controller's EventLoop thread only.
#pragma once

#include <string>
#include <tuple>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::controller {

struct Request {
  std::string ns;
  std::string name;
  std::string Key() const { return ns + "/" + name; }
  // By namespace, then name: an order for the queue's sets, which no output follows.
  bool operator<(const Request& o) const { return std::tie(ns, name) < std::tie(o.ns, o.name); }
  bool operator==(const Request& o) const { return ns == o.ns && name == o.name; }
};

struct ReconcileResult {
  Duration requeue_after{};  // zero: no timed requeue
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Non-OK: retried with per-key exponential backoff, unless status.terminal().
  virtual Result<ReconcileResult> Reconcile(const Request& request) = 0;
};

}  // namespace pjemu::controller
