// A PyTorchJob's conditions as clients and the operator read them: the condition types, and the
// predicates over .status.conditions (has the job succeeded, failed, finished; which condition
// says so). This is the one place that decides whether a job has finished. How the operator
// writes conditions (UpdateJobConditions) is the controller's business, not this header's.
// Thread safety: pure functions over values; returned pointers point into the argument.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

// The job condition types (JobConditionType).
inline constexpr char kCreated[] = "Created";
inline constexpr char kRunning[] = "Running";
inline constexpr char kRestarting[] = "Restarting";
inline constexpr char kSucceeded[] = "Succeeded";
inline constexpr char kSuspended[] = "Suspended";
inline constexpr char kFailed[] = "Failed";

// "PyTorchJob" + suffix ("Created", "Running", ...): the condition and event reasons.
std::string JobReason(const std::string& suffix);

// Predicates over a job's .status (a JobStatus object; null or anything else reads as empty).
// True when status has condition `type` with status "True".
bool HasCondition(const Json& status, const std::string& type);
inline bool IsSucceeded(const Json& s) { return HasCondition(s, kSucceeded); }
inline bool IsFailed(const Json& s) { return HasCondition(s, kFailed); }
inline bool IsRunning(const Json& s) { return HasCondition(s, kRunning); }
inline bool IsSuspendedCondition(const Json& s) { return HasCondition(s, kSuspended); }
// Succeeded or Failed is True: the job has finished and the operator will not run it again.
bool IsFinished(const Json& status);

// Readers over a whole job object.
// The condition that finished the job: the first Succeeded or Failed condition whose status is
// "True"; nullptr while the job has not finished (then IsFinished(job.status) is false).
const Json* FinalCondition(const Json& job);
// The last condition whose status is "True" (Created, Running, Suspended, ... while the job runs;
// the final one once it has finished); nullptr when there is none.
const Json* LastTrueCondition(const Json& job);
// The type of the last condition, "" when there is none: the CRD's State printer column
// (.status.conditions[-1:].type), what `kubectl get pytorchjobs` shows.
std::string JobState(const Json& job);

}  // namespace pjemu::api
