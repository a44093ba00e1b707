// The JobSet controller (kubernetes-sigs/jobset): the level-based glue around the pure
// ComputeSync (sync.h). Each pass re-reads the JobSet, the batch/v1 Jobs it controls (by the
// jobset-name label and the controller ownerReference) and its headless Service, runs
// ComputeSync, carries out its actions (Jobs created, updated for suspend, deleted with
// background propagation; the Service created; events from "jobset") and writes .status once
// at the end through the status subresource. A deleted JobSet (NotFound) is done. What it does,
// point by point with its tests: BEHAVIOUR.md.
// Thread safety: not thread-safe; its Controller calls it on the EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::jobset {

class Reconciler : public controller::KindReconciler {
 public:
  Reconciler(client::Client& client, const Clock& clock);

 private:
  // Errors: the Client's (kConflict on a stale status write, ...); the work queue retries with
  // backoff.
  Result<controller::ReconcileResult> ReconcileOnce(const controller::Request& request) override;
};

// The kind's Controller: JobSets, the Jobs that carry the jobset-name label, and Services.
controller::KindSpec Kind(client::Client& client, const Clock& clock);

}  // namespace pjemu::jobset
