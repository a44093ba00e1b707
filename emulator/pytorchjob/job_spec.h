// The names and references the PyTorchJob controller gives the objects it creates for a job:
// pod and service names, their labels and selectors, the owner reference, the port the job's
// processes rendezvous on, and which exit codes the ExitCode restart policy retries. The job's
// own vocabulary (constants, defaulting, read helpers) is api/pytorchjob.h.
// Thread safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/api/pytorchjob.h"
#include "emulator/common/status.h"

namespace pjemu::pytorchjob {

// "<job>-<lower(rtype)>-<index>" with '/' replaced by '-' (GenGeneralName).
std::string GenGeneralName(const std::string& job, const std::string& rtype,
                           const std::string& index);
// {operator-name, job-name} (GenLabels).
Json GenLabels(const std::string& job_name);
// "training.kubeflow.org/job-name=<job>,...operator-name=...,...replica-type=<rt>" (sorted keys).
std::string ReplicaSelector(const std::string& job_name, const std::string& rtype);
// The controller owner reference for objects the job owns.
Json OwnerReference(const Json& job);

// The containerPort of the pytorchjob-port of the pytorch container of rtype; kNotFound if none.
Result<std::int64_t> PortFromJob(const Json& job, const std::string& rtype);
// The ExitCode policy's rule: codes >= 128 are retryable.
inline bool IsRetryableExitCode(std::int64_t code) { return code >= 128; }

}  // namespace pjemu::pytorchjob
