// Job status of a PyTorchJob: the Training Operator's ReconcileJobs/ReconcilePods/
// UpdateJobStatus (BEHAVIOUR.md points 23-41) as pure functions. Given the DEFAULTED job (its
// .status is the previous status), the pods and services it controls, and `now`, ComputeJobStatus
// returns the new status plus the ordered actions (events, pod/service creates and deletes, job
// deletion for TTL) the reconciler must carry out, and when to look again.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/object_list.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/controller/children.h"
#include "emulator/controller/kind.h"
#include "emulator/pytorchjob/desired_objects.h"

namespace pjemu::pytorchjob {

using controller::Action;
using controller::Sync;

// One pass of ReconcileJobs. REQUIRES: job is defaulted (SetDefaults); pods and services are
// the ones the job controls (label job-name + operator-name, controller ownerReference).
Sync ComputeJobStatus(const Json& job, const api::ObjectList& pods, const api::ObjectList& services,
                      Time now, const InitContainerOptions& init = {});

// --- The pieces, table-tested on their own (upstream's unit tests T31-T48). ---

// DeletePodsAndServices: the pod and same-named service deletions for a job whose status is
// `status` (cleanPodPolicy None/Running/All when finished; everything otherwise).
std::vector<std::string> PodsToCleanUp(const Json& job, const Json& status,
                                       const api::ObjectList& pods);
// PastBackoffLimit: restartCounts of Running pods of OnFailure/Always/ExitCode replicas.
bool PastBackoffLimit(const Json& job, const api::ObjectList& pods);
// PastActiveDeadline: now - status.startTime >= activeDeadlineSeconds.
bool PastActiveDeadline(const Json& job, const Json& status, Time now);

struct TtlDecision {
  bool delete_job = false;
  std::optional<Duration> requeue_after;
  Status error;  // "job completion time is nil, cannot cleanup"
};
// CleanupJob for ttlSecondsAfterFinished (deletes at now >= completionTime + ttl).
TtlDecision CleanupJob(const Json& job, const Json& status, Time now);

// Pods/services whose replica-type label equals lower(rtype).
api::ObjectList FilterForReplicaType(const api::ObjectList& objects, const std::string& rtype);
// max(replicas, highest replica-index + 1) (CalculatePodSliceSize).
std::int64_t SliceSize(const api::ObjectList& objects, std::int64_t replicas);
// updateJobReplicaStatuses: adds the pod to replica_status's active/succeeded/failed.
void CountPod(Json& replica_status, const Json& pod);
// The exit code of the pytorch container's terminated state, or 0xbeef when there is none.
std::int64_t PytorchExitCode(const Json& pod);

}  // namespace pjemu::pytorchjob
