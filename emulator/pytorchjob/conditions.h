// How the operator writes a job's conditions (the Training Operator's pkg/util/status.go) over
// the wire-form status JSON: Failed is terminal, same status+reason is a no-op, a changed
// condition is removed and re-appended, Running and Restarting exclude each other, and
// Succeeded/Failed flip an existing Running to False in place. The condition types and the
// predicates that read them (IsFinished, ...) are api/job_conditions.h.
// Thread safety: pure functions over values.
#pragma once

#include <string>

#include "emulator/api/job_conditions.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::pytorchjob {

// UpdateJobConditions: sets condition `type` on status (a JobStatus object) at time `now`.
void UpdateJobConditions(Json& status, const std::string& type, const std::string& cond_status,
                         const std::string& reason, const std::string& message, Time now);

}  // namespace pjemu::pytorchjob
