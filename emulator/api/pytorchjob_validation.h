// Admission for PyTorchJobs: the Training Operator's validating webhook plus the one CEL rule of
// the CRD schema (schedulingPolicy.queue is immutable). It is the PyTorchJob row's admission in
// the resource table (resources.h), so every store runs it; it sees the object exactly as
// submitted, before any defaulting. `pjemu validate` and the console call it directly to check
// manifests before they are sent.
// Thread safety: pure functions of their arguments; safe from any thread (the store runs them
// under its lock).
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

// One apimachinery field.Error (of the webhook, and of the core types' admission).
struct FieldError {
  // In kTypeNames' order (pytorchjob_validation.cc); the core types' admission uses the last
  // three (object_validation.h).
  enum class Type {
    kRequired,
    kForbidden,
    kInvalid,
    kNotSupported,
    kNotFound,
    kDuplicate,
    kTooLong,
    kTooMany
  };
  Type type;
  std::string field;   // "spec.pytorchReplicaSpecs[Master].replicas"
  std::string value;   // the bad value as Go prints it (`"0-test"`); "" when omitted
  std::string detail;  // "must be 1"
  // "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1".
  std::string ToString() const;
  // The metav1.CauseType of details.causes[].reason: "FieldValueRequired", ...
  const char* CauseReason() const;
};

// The webhook's field errors and warnings in the order it appends them (replica types in the
// ReplicaTypes order). `old` is the stored object on UPDATE, nullptr on CREATE.
std::vector<FieldError> WebhookFieldErrors(const Json& job, const Json* old,
                                           std::vector<std::string>* warnings);

// The PyTorchJob's validation in the resource table (ResourceType::Admission::validate). Returns:
//  - kInvalid (422) for the CRD's CEL rule, `PyTorchJob.kubeflow.org "x" is invalid: ...`,
//    like the API server's schema validation;
//  - kForbidden (403) for webhook denials, with the real API server's message
//    `admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the
//    request: <aggregate>` (one error: its text; several: `[e1, e2]`).
// Both carry details {name, group: kubeflow.org, kind: PyTorchJob, causes[{reason, message,
// field}]}. Appends the nProcPerNode deprecation warning to *warnings (may be null).
Status ValidatePyTorchJob(const Json& job, const Json* old, std::vector<std::string>* warnings);

}  // namespace pjemu::api
