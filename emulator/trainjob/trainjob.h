// Kubeflow Trainer v2's TrainJob controller: the level-based glue around the pure ComputeSync
// (sync.h). Each pass re-reads the TrainJob, its runtime (runtimeRef: a ClusterTrainingRuntime,
// or a TrainingRuntime of its namespace) and the JobSet of its name that it controls, runs
// ComputeSync, carries out its actions (the JobSet created, its suspend updated, deleted at the
// deadline; events from "trainer-controller-manager") and writes .status once at the end. A
// deleted TrainJob (NotFound) is done. What it does, point by point with its tests:
// BEHAVIOUR.md.
// Thread safety: not thread-safe; its Controller calls it on the EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::trainjob {

class Reconciler : public controller::KindReconciler {
 public:
  Reconciler(client::Client& client, const Clock& clock);

 private:
  // Errors: the Client's; the work queue retries with backoff. requeue_after for the deadline.
  Result<controller::ReconcileResult> ReconcileOnce(const controller::Request& request) override;
};

// The kind's Controller: TrainJobs and the JobSets they own.
controller::KindSpec Kind(client::Client& client, const Clock& clock);

// What the operator's manifests install with it: the default `torch-distributed`
// ClusterTrainingRuntime, created when absent (an existing one, a user's edit, is kept).
// Errors: the Client's, other than AlreadyExists.
Status InstallDefaultRuntimes(client::Client& client);

}  // namespace pjemu::trainjob
