// Kueue's scheduler as one pure function: given the cluster's Kueue objects (flavors, queues,
// namespaces, Workloads), which pending Workloads get quota now, which admitted ones are
// preempted to make room, and what every other pending one is told. emulator/kueue's
// controller writes the decisions; this file decides.
//
// Rules (Kueue v0.19's, BEHAVIOUR.md lists them with their tests):
//  - A Workload is pending while it has no status.admission, is active and not Finished; it
//    holds quota while it has one (an evicted one too, until its job has stopped).
//  - Blockers first: a missing or stopped LocalQueue or ClusterQueue (reason Inadmissible), a
//    ClusterQueue whose flavors are missing (inactive), a namespace its namespaceSelector does
//    not select (null selects none; reason Pending).
//  - Each ClusterQueue's pending Workloads in order: higher spec.priority, then older creation,
//    then uid. StrictFIFO stops at the first that cannot be admitted; BestEffortFIFO goes on
//    past one that does not fit; both stop behind one that waits for preemption.
//  - Flavors: per pod set, each resource group's flavors in order; a flavor whose taints the
//    pod set does not tolerate, or whose nodeLabels contradict its nodeSelector, is skipped;
//    the first where every resource fits the unused quota wins; else the first that fits the
//    nominal quota once others go (preemption); else none (the reasons, sorted).
//  - Quota: nominal minus what the queue's admitted Workloads use; with a cohort, unused
//    nominal quota of the cohort's other queues may be borrowed within borrowingLimit.
//  - Preemption, for a Workload within its nominal quota: admitted Workloads of the same queue
//    by withinClusterQueue (LowerPriority, LowerOrNewerEqualPriority) and of the cohort's
//    borrowing queues by reclaimWithinCohort (Any, LowerPriority); evicted ones first, then
//    other queues', then lowest priority, then the most recently admitted, taken until the
//    Workload fits, then given back in reverse while it still fits.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::kueue {

// The objects the scheduler reads, as stored.
struct Snapshot {
  std::map<std::string, Json> flavors;         // by name
  std::map<std::string, Json> cluster_queues;  // by name
  std::map<std::string, Json> local_queues;    // by "<namespace>/<name>"
  std::map<std::string, Json> namespaces;      // by name
  std::vector<Json> workloads;                 // every Workload
};

// Quota reserved for a Workload: its status.admission.
struct Admit {
  std::string key;  // "<namespace>/<name>"
  Json admission;   // {clusterQueue, podSetAssignments[{name, flavors, resourceUsage, count}]}
  // "; Flavors considered: ..." is not emulated: the QuotaReserved event's message.
  std::string message;
};

// An admitted Workload preempted for `preemptor`.
struct Evict {
  std::string key;
  std::string preemptor;  // its key
  std::string reason;     // the Preempted condition's: "InClusterQueue"
  std::string message;    // "Preempted to accommodate a workload (UID: ...) due to ..."
};

// A pending Workload that stays pending: QuotaReserved False with this reason and message.
struct Pending {
  std::string key;
  std::string reason;  // "Pending" (the scheduler's) or "Inadmissible" (a blocker's)
  std::string message;
};

struct Plan {
  std::vector<Admit> admit;  // in admission order
  std::vector<Evict> evict;
  std::vector<Pending> pending;
};

Plan Schedule(const Snapshot& snapshot, Time now);

// Why a ClusterQueue cannot admit ("" when it can): its Active condition's message parts.
std::vector<std::string> InactiveReasons(const Json& cq, const std::map<std::string, Json>& flavors);

// The resources an admission holds: flavor -> resource -> amount (the scheduler's units).
using Usage = std::map<std::string, std::map<std::string, std::int64_t>>;
Usage AdmissionUsage(const Json& admission);

}  // namespace pjemu::kueue
