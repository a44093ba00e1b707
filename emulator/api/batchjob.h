// batch/v1 Job: the vocabulary kube-controller-manager's Job controller and its clients share
// (labels, annotations, condition types and reasons), the API server's defaulting and
// validation of a Job (the resource table's admission), and the predicates over its status.
// What the controller does with it: emulator/batchjob/BEHAVIOUR.md.
// Thread safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/common/status.h"

namespace pjemu::api::batchjob {

inline constexpr char kApiVersion[] = "batch/v1";
inline constexpr char kKind[] = "Job";
// kube-controller-manager's Job controller: source.component of its events.
inline constexpr char kControllerName[] = "job-controller";

// Labels the API server puts on the pod template (and the selector) of a Job without
// manualSelector, and the Indexed pods' completion index (annotation and label).
inline constexpr char kControllerUidLabel[] = "batch.kubernetes.io/controller-uid";
inline constexpr char kJobNameLabel[] = "batch.kubernetes.io/job-name";
inline constexpr char kLegacyControllerUidLabel[] = "controller-uid";
inline constexpr char kLegacyJobNameLabel[] = "job-name";
inline constexpr char kCompletionIndex[] = "batch.kubernetes.io/job-completion-index";

// spec.completionMode.
inline constexpr char kNonIndexed[] = "NonIndexed";
inline constexpr char kIndexed[] = "Indexed";

// JobConditionType.
inline constexpr char kComplete[] = "Complete";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kSuspended[] = "Suspended";
inline constexpr char kFailureTarget[] = "FailureTarget";
inline constexpr char kSuccessCriteriaMet[] = "SuccessCriteriaMet";

// The controller's condition reasons and messages.
inline constexpr char kCompletionsReached[] = "CompletionsReached";
inline constexpr char kCompletionsReachedMessage[] = "Reached expected number of succeeded pods";
inline constexpr char kBackoffLimitExceeded[] = "BackoffLimitExceeded";
inline constexpr char kBackoffLimitExceededMessage[] = "Job has reached the specified backoff limit";
inline constexpr char kDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kDeadlineExceededMessage[] = "Job was active longer than specified deadline";
inline constexpr char kPodFailurePolicy[] = "PodFailurePolicy";
inline constexpr char kJobSuspended[] = "JobSuspended";
inline constexpr char kJobResumed[] = "JobResumed";

// The API server's defaulting (SetDefaults_Job and the strategy's generated selector): the
// admission defaulter. parallelism 1 and completions 1 when both are absent (parallelism 1 when
// only it is), backoffLimit 6, completionMode NonIndexed, suspend false, manualSelector false,
// podReplacementPolicy TerminatingOrFailed (Failed with a podFailurePolicy); without
// manualSelector, spec.selector = {controller-uid: <uid>} and the four labels on the template.
// REQUIRES: metadata.uid and metadata.name are set (the store assigns them before admission).
void SetDefaults(Json& job);

// The apiserver's validation of a Job (ValidateJob/ValidateJobUpdate), each error naming its
// field: restartPolicy OnFailure or Never, containers with images, non-negative counts,
// activeDeadlineSeconds > 0, Indexed needs completions, the selector matches the template,
// podFailurePolicy's actions and operators; on update, the template, selector and
// completionMode are immutable.
std::vector<FieldError> FieldErrors(const Json& job, const Json* old);
// The admission validator: 422 Job.batch "x" is invalid: ... (object_validation.h).
Status Validate(const Json& job, const Json* old, std::vector<std::string>* warnings);

// Status predicates.
// The condition of `type` whose status is "True", or nullptr.
const Json* TrueCondition(const Json& job, const std::string& type);
// Complete or Failed is True: the controller will not run it again.
bool IsFinished(const Json& job);
std::int64_t IntOr(const Json& obj, const char* key, std::int64_t fallback);
bool IsIndexed(const Json& job);

// "1,3-5,7" of sorted, distinct indexes (status.completedIndexes / failedIndexes).
std::string FormatIntervals(const std::vector<std::int64_t>& sorted);

}  // namespace pjemu::api::batchjob
