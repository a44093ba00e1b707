// One pass of kube-controller-manager's Job controller (syncJob, manageJob) as a pure function
// (BEHAVIOUR.md): given the stored, API-server-defaulted Job (its .status the previous status),
// the pods it controls and `now`, ComputeSync returns the new status, the ordered actions the
// reconciler carries out (events, pod creates and deletes, the TTL's background delete of the
// Job) and when to look again (activeDeadlineSeconds, the pod failure backoff,
// ttlSecondsAfterFinished).
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/object_list.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/controller/kind.h"

namespace pjemu::batchjob {

using controller::Action;
using controller::Sync;

// REQUIRES: job was defaulted by admission (api::batchjob::SetDefaults).
Sync ComputeSync(const Json& job, const api::ObjectList& pods, Time now);

// --- Pieces, table-tested on their own. ---

// The pod of completion index `index` (nullopt: NonIndexed), ready for Client::Create:
// generateName `<job>-` / `<job>-<index>-`, the template's labels and annotations, the
// completion index annotation and label, hostname `<job>-<index>`, JOB_COMPLETION_INDEX, and the
// controller ownerReference.
Json DesiredPod(const Json& job, std::optional<std::int64_t> index);

// What the podFailurePolicy says of a failed pod: the first matching rule's action ("FailJob",
// "Ignore", "Count", "FailIndex"; "Count" when none matches) and, for FailJob, the condition's
// message.
struct PolicyMatch {
  std::string action = "Count";
  std::string message;
};
PolicyMatch MatchPodFailurePolicy(const Json& job, const Json& pod);

// The delay before a new pod after `failures` pod failures: 10s doubled per failure, at most
// 6 minutes (the controller's DefaultJobPodFailureBackOff / MaxJobPodFailureBackOff).
Duration FailureBackoff(std::int64_t failures);

}  // namespace pjemu::batchjob
