// PyTorchJobReconciler: the level-based glue of the PyTorchJob controller. Each pass re-reads the
// job and the pods/services it controls through the Client, runs the pure ComputeJobStatus, then
// carries out its actions (events, creates, deletes, TTL job deletion), reconciles the elastic
// HPA and writes .status through the status subresource. A deleted job (NotFound) is done.
// Thread safety: not thread-safe; the Controller calls it on its EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/desired_objects.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/pod_group.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::controller {

class PyTorchJobReconciler : public Reconciler {
 public:
  // `gang`: the operator's --gang-scheduler-name (pod_group.h); off by default.
  PyTorchJobReconciler(client::Client& client, const Clock& clock, InitContainerOptions init = {},
                       GangOptions gang = {});

  // Errors: whatever the Client returns (kConflict on a stale status write, kUnavailable, ...)
  // and the job-level errors upstream returns (e.g. TTL with a nil completionTime); the caller
  // retries with backoff. requeue_after > 0 for TTL expiry and activeDeadlineSeconds.
  Result<ReconcileResult> Reconcile(const Request& request) override;

 private:
  Result<ReconcileResult> ReconcileOnce(const Request& request);
  Status ReconcileHpa(const Json& job);
  Result<std::vector<Json>> ListOwned(const api::ResourceType& type, const Json& job);
  Status Execute(const Json& job, const struct JobAction& action);

  client::Client& client_;
  const Clock& clock_;
  InitContainerOptions init_;
  GangOptions gang_;
  EventRecorder recorder_;
  ChildWriter writer_;
};

// The PyTorchJob's Controller: the kind, its pods and services (by the operator-name label) and
// this reconciler.
KindSpec PyTorchJobKind(client::Client& client, const Clock& clock,
                        InitContainerOptions init = {}, GangOptions gang = {});

}  // namespace pjemu::controller
