// Kubeflow Trainer v2's TrainJob controller as a job kind's descriptor, run by
// controller::KindReconciler: each pass reads the TrainJob, its runtime (runtimeRef: a
// ClusterTrainingRuntime, or a TrainingRuntime of its namespace), the JobSet of its name that it
// controls and the PodGroup of its name, and runs the pure ComputeSync (sync.h): the PodGroup
// of a coscheduled runtime created, the JobSet created, its suspend updated, deleted at the
// deadline; events from "trainer-controller-manager"; .status written
// once at the end. Its install hook creates the default runtime. What it does, point by point
// with its tests: BEHAVIOUR.md.
// Thread safety: an immutable static.
#pragma once

#include "emulator/client/client.h"
#include "emulator/controller/kind.h"

namespace pjemu::trainjob {

// TrainJobs, the JobSets and PodGroups they own, their runtimes (read, not watched); installs
// InstallDefaultRuntimes.
const controller::KindDescriptor& Descriptor();

// What the operator's manifests install with it: the default `torch-distributed`
// ClusterTrainingRuntime, created when absent (an existing one, a user's edit, is kept).
// Errors: the Client's, other than AlreadyExists.
Status InstallDefaultRuntimes(client::Client& client);

}  // namespace pjemu::trainjob
