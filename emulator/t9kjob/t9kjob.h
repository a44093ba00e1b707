// The PyTorchTrainingJob controller (T9k's batch.tensorstack.dev/v1beta1): the level-based glue
// around the pure ComputeSync (sync.h). Each pass re-reads the job and the pods, Services and
// TensorBoards it controls through the Client, runs ComputeSync on the defaulted job, carries
// out its actions and writes .status through the status subresource. A deleted job (NotFound)
// is done. What it does, point by point with the tests that prove each: BEHAVIOUR.md.
// Thread safety: not thread-safe; its Controller calls it on the EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::t9kjob {

class Reconciler : public controller::KindReconciler {
 public:
  Reconciler(client::Client& client, const Clock& clock);

 private:
  // Errors: the Client's (kConflict on a stale status write, ...) and a pod that cannot be made
  // (kInvalid); the work queue retries with backoff. requeue_after for activeDeadlineSeconds.
  Result<controller::ReconcileResult> ReconcileOnce(const controller::Request& request) override;
};

// The kind's Controller: PyTorchTrainingJobs, and the pods, Services and TensorBoards that carry
// the owner-name label.
controller::KindSpec Kind(client::Client& client, const Clock& clock);

}  // namespace pjemu::t9kjob
