// The PyTorchTrainingJob controller (T9k's batch.tensorstack.dev/v1beta1) as a job kind's
// descriptor, run by controller::KindReconciler: each pass reads the job and the pods, Services
// and TensorBoards it controls and runs the pure ComputeSync (sync.h) on the defaulted job;
// .status is written before the pass reports a pod it could not make. What it does, point by
// point with the tests that prove each: BEHAVIOUR.md.
// Thread safety: an immutable static.
#pragma once

#include "emulator/controller/kind.h"

namespace pjemu::t9kjob {

// PyTorchTrainingJobs, and the pods, Services and TensorBoards that carry the owner-name label.
const controller::KindDescriptor& Descriptor();

}  // namespace pjemu::t9kjob
