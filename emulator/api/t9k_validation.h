// Admission for T9k's PyTorchTrainingJob: the constraints T9k's documentation states (replica
// specs present, restart policies, procPerNode a number or "gpu", rendezvous backends, elastic
// bounds and their immutability, cleanUpPolicy, a positive deadline, the scheduler's priority
// range, pause.resumeSpecs immutable). T9k publishes no webhook texts, so each refusal is the
// API server's schema form: 422 `PyTorchTrainingJob.batch.tensorstack.dev "x" is invalid: ...`
// with one cause per field (README "Assumptions about T9k").
// Thread safety: pure functions; the store runs them under its lock.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/common/status.h"

namespace pjemu::api::t9k {

// The field errors of a job as submitted (before defaulting); `old` is the stored job on update.
std::vector<FieldError> FieldErrors(const Json& job, const Json* old);
// The resource table's validator: OK, or kInvalid carrying FieldErrors as details.causes.
Status Validate(const Json& job, const Json* old, std::vector<std::string>* warnings);

}  // namespace pjemu::api::t9k
