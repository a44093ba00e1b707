// The batch/v1 Job controller (kube-controller-manager's job controller): the level-based glue
// around the pure ComputeSync (sync.h). Each pass re-reads the Job and the pods it controls
// (by its selector's labels and the controller ownerReference), runs ComputeSync, carries out
// its actions (pods created with generateName and announced as SuccessfulCreate "Created pod:
// x", deleted as SuccessfulDelete) and writes .status through the status subresource. A deleted
// Job (NotFound) is done. What it does, point by point with its tests: BEHAVIOUR.md.
// Thread safety: not thread-safe; its Controller calls it on the EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::batchjob {

class Reconciler : public controller::KindReconciler {
 public:
  Reconciler(client::Client& client, const Clock& clock);

 private:
  // Errors: the Client's (kConflict on a stale status write, ...); the work queue retries with
  // backoff. requeue_after for activeDeadlineSeconds, the failure backoff and the TTL.
  Result<controller::ReconcileResult> ReconcileOnce(const controller::Request& request) override;
};

// The kind's Controller: Jobs, and the pods that carry the job-name label.
controller::KindSpec Kind(client::Client& client, const Clock& clock);

}  // namespace pjemu::batchjob
