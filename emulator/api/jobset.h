// JobSet (jobset.x-k8s.io/v1alpha2): the vocabulary the JobSet controller, its webhook and its
// users share (labels and annotations on child Jobs and pods, condition types, reasons and
// messages), the webhook's defaulting and validation (the resource table's admission), the
// names the controller derives (child Jobs, the headless Service) and status predicates.
// What the controller does with it: emulator/jobset/BEHAVIOUR.md.
// Thread safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/api/kueue.h"
#include "emulator/api/pytorchjob_validation.h"
#include "emulator/common/status.h"

namespace pjemu::api::jobset {

inline constexpr char kApiVersion[] = "jobset.x-k8s.io/v1alpha2";
inline constexpr char kKind[] = "JobSet";
// The JobSet controller manager's event recorder name (source.component of its events).
inline constexpr char kControllerName[] = "jobset";

// Labels and annotations on each child Job and its pod template (labelAndAnnotateObject).
inline constexpr char kJobSetNameKey[] = "jobset.sigs.k8s.io/jobset-name";
inline constexpr char kJobSetUidKey[] = "jobset.sigs.k8s.io/jobset-uid";
inline constexpr char kReplicatedJobNameKey[] = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr char kReplicatedJobReplicasKey[] = "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr char kGlobalReplicasKey[] = "jobset.sigs.k8s.io/global-replicas";
inline constexpr char kJobIndexKey[] = "jobset.sigs.k8s.io/job-index";
inline constexpr char kJobKey[] = "jobset.sigs.k8s.io/job-key";
inline constexpr char kJobGlobalIndexKey[] = "jobset.sigs.k8s.io/job-global-index";
inline constexpr char kGroupNameKey[] = "jobset.sigs.k8s.io/group-name";
inline constexpr char kGroupReplicasKey[] = "jobset.sigs.k8s.io/group-replicas";
inline constexpr char kJobGroupIndexKey[] = "jobset.sigs.k8s.io/job-group-index";
inline constexpr char kRestartsKey[] = "jobset.sigs.k8s.io/restart-attempt";
inline constexpr char kDefaultGroup[] = "default";

// JobSetConditionType.
inline constexpr char kCompleted[] = "Completed";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kSuspended[] = "Suspended";
inline constexpr char kStartupPolicyCompleted[] = "StartupPolicyCompleted";

// The controller's reasons and messages (pkg/constants).
inline constexpr char kAllJobsCompleted[] = "AllJobsCompleted";
inline constexpr char kAllJobsCompletedMessage[] = "jobset completed successfully";
inline constexpr char kFailedJobs[] = "FailedJobs";
inline constexpr char kFailedJobsMessage[] = "jobset failed due to one or more job failures";
inline constexpr char kReachedMaxRestarts[] = "ReachedMaxRestarts";
inline constexpr char kReachedMaxRestartsMessage[] =
    "jobset failed due to reaching max number of restarts";
inline constexpr char kFailJobSetAction[] = "FailJobSetFailurePolicyAction";
inline constexpr char kFailJobSetActionMessage[] = "applying FailJobSet failure policy action";
inline constexpr char kSuspendedJobs[] = "SuspendedJobs";
inline constexpr char kSuspendedJobsMessage[] = "jobset is suspended";
inline constexpr char kResumeJobs[] = "ResumeJobs";
inline constexpr char kResumeJobsMessage[] = "jobset is resumed";
inline constexpr char kRestarting[] = "Restarting";
inline constexpr char kInOrderCompleted[] = "InOrderStartupPolicyCompleted";
inline constexpr char kInOrderCompletedMessage[] = "in order startup policy has completed";

// The webhook's defaulting (jobset_webhook.go Default): per replicatedJob replicas 1, groupName
// "default", completionMode Indexed and pod restartPolicy OnFailure; successPolicy {operator:
// All}; startupPolicy {startupPolicyOrder: AnyOrder}; network.enableDNSHostnames and
// publishNotReadyAddresses true; failurePolicy.restartStrategy Recreate when a policy is set.
void SetDefaults(Json& jobset);

// The webhook's validation, each error naming its field: replicatedJobs present with unique
// DNS-label names, a child Job name that fits 63 characters, successPolicy's operator and
// targets, failurePolicy's maxRestarts and rule actions; on update, replicatedJobs are
// immutable unless the JobSet is suspended.
std::vector<FieldError> FieldErrors(const Json& jobset, const Json* old);
// The admission validator: 403 `admission webhook "vjobset.kb.io" denied the request: ...`.
Status Validate(const Json& jobset, const Json* old, std::vector<std::string>* warnings);

// --- Names the controller derives. ---

// `<jobset>-<replicatedJob>-<jobIndex>` (placement.GenJobName).
std::string JobName(const std::string& jobset, const std::string& rjob, std::int64_t index);
// network.subdomain, else the JobSet's name: the headless Service and the pods' subdomain.
std::string Subdomain(const Json& jobset);
// network.enableDNSHostnames (true after defaulting).
bool DnsHostnames(const Json& jobset);
// sha1 hex of "<namespace>/<job name>" (the job-key label).
std::string JobKey(const std::string& ns, const std::string& job_name);

// --- Status predicates. ---

// Completed or Failed is True: the controller does no more.
bool IsFinished(const Json& jobset);

// Kueue's view of a JobSet (its jobset integration): a pod set per replicated job, of its name,
// replicas x min(parallelism, completions) pods and its Job template's pod template; and those
// templates inside the JobSet, in the same order.
std::vector<kueue::PodSet> PodSets(const Json& jobset);
std::vector<Json*> PodTemplates(Json& jobset);
// Every replicated job's Jobs ready or succeeded (replicatedJobsStatus against replicas).
bool JobsReady(const Json& jobset);

}  // namespace pjemu::api::jobset
