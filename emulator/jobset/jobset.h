// The JobSet controller (kubernetes-sigs/jobset) as a job kind's descriptor, run by
// controller::KindReconciler: each pass reads the JobSet, the batch/v1 Jobs it controls (by the
// jobset-name label and the controller ownerReference) and its headless Service, and runs the
// pure ComputeSync (sync.h): Jobs created, updated for suspend, deleted with background
// propagation; the Service created; events from "jobset"; .status written once at the end.
// What it does, point by point with its tests: BEHAVIOUR.md.
// Thread safety: an immutable static.
#pragma once

#include "emulator/controller/kind.h"

namespace pjemu::jobset {

// JobSets, the Jobs that carry the jobset-name label, and the headless Service (read, not
// watched).
const controller::KindDescriptor& Descriptor();

}  // namespace pjemu::jobset
