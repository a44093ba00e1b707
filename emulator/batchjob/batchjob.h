// The batch/v1 Job controller (kube-controller-manager's job controller) as a job kind's
// descriptor, run by controller::KindReconciler: each pass reads the Job and the pods it
// controls (by its selector's labels and the controller ownerReference) and runs the pure
// ComputeSync (sync.h); pods are created with generateName and announced as SuccessfulCreate
// "Created pod: x", deleted as SuccessfulDelete. What it does, point by point with its tests:
// BEHAVIOUR.md.
// Thread safety: an immutable static.
#pragma once

#include "emulator/controller/kind.h"

namespace pjemu::batchjob {

// Jobs, and the pods that carry the job-name label.
const controller::KindDescriptor& Descriptor();

}  // namespace pjemu::batchjob
