// Job condition mechanics of the Training Operator (pkg/util/status.go, spec 6.1) over the
// wire-form status JSON: Failed is terminal, same status+reason is a no-op, a changed condition
// is removed and re-appended, Running and Restarting exclude each other, and Succeeded/Failed
// flip an existing Running to False in place. Used by job status computation.
// Thread safety: pure functions over values.
#pragma once

#include <string>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::controller {

inline constexpr char kCreated[] = "Created";
inline constexpr char kRunning[] = "Running";
inline constexpr char kRestarting[] = "Restarting";
inline constexpr char kSucceeded[] = "Succeeded";
inline constexpr char kSuspended[] = "Suspended";
inline constexpr char kFailed[] = "Failed";

// "PyTorchJob" + suffix ("Created", "Running", ...): the condition and event reasons.
std::string JobReason(const std::string& suffix);

// UpdateJobConditions: sets condition `type` on status (a JobStatus object) at time `now`.
void UpdateJobConditions(Json& status, const std::string& type, const std::string& cond_status,
                         const std::string& reason, const std::string& message, Time now);

// True when status has condition `type` with status "True".
bool HasCondition(const Json& status, const std::string& type);
inline bool IsSucceeded(const Json& s) { return HasCondition(s, kSucceeded); }
inline bool IsFailed(const Json& s) { return HasCondition(s, kFailed); }
inline bool IsRunning(const Json& s) { return HasCondition(s, kRunning); }
inline bool IsSuspendedCondition(const Json& s) { return HasCondition(s, kSuspended); }
inline bool IsFinished(const Json& s) { return IsSucceeded(s) || IsFailed(s); }

}  // namespace pjemu::controller
