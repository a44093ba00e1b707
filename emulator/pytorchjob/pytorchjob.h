// The PyTorchJob controller (Kubeflow Training Operator v1.9.4 semantics) as a job kind's
// descriptor, run by controller::KindReconciler: each pass reads the job, the pods and services
// it controls (job-name + operator-name labels, controller ownerReference) and, for an elastic
// job, its HorizontalPodAutoscaler; the pure pass reconciles the HPA first, then runs
// ComputeJobStatus (job_status.h) on the defaulted job. Child writes are announced as the
// common job controller does (SuccessfulCreatePod ...); the TTL's delete of the job ends the
// pass; an error of the pass is reported before the status write. A job another controller
// manages (runPolicy.managedBy) is left alone. With the cluster's --gang-scheduler-name
// (controller::KindOptions) its prepare hook syncs the job's PodGroup before the pass's writes
// and its decorate hook puts each pod it creates in the gang (pod_group.h). What it does, point by point with the tests
// that prove each: BEHAVIOUR.md.
// Thread safety: an immutable static; SyncPyTorchJob is pure.
#pragma once

#include "emulator/controller/kind.h"

namespace pjemu::pytorchjob {

// PyTorchJobs, their pods and services (by the operator-name label) and HPAs (read, not
// watched).
const controller::KindDescriptor& Descriptor();

// One pass over the stored job and what it read: the HPA's create, update or delete (no
// events), then ComputeJobStatus's actions and status.
controller::Sync SyncPyTorchJob(const Json& stored, const controller::Children& children, Time now);

}  // namespace pjemu::pytorchjob
