// Admission for PyTorchJobs: the Training Operator's validating webhook (spec section 2) plus
// the one CEL rule of the CRD schema (schedulingPolicy.queue is immutable). The cluster registers
// it with store.SetValidator(api::PyTorchJobs(), ValidatePyTorchJob); it sees the object exactly
// as submitted, before any defaulting.
// Thread safety: a pure function of its arguments; safe from any thread (runs under the store
// lock).
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::controller {

// One apimachinery field.Error.
struct FieldError {
  enum class Type { kRequired, kForbidden, kInvalid, kNotSupported };
  Type type;
  std::string field;   // "spec.pytorchReplicaSpecs[Master].replicas"
  std::string value;   // the bad value as Go prints it (`"0-test"`); "" when omitted
  std::string detail;  // "must be 1"
  // "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1".
  std::string ToString() const;
};

// The webhook's field errors and warnings in the order it appends them (replica types in the
// ReplicaTypes order). `old` is the stored object on UPDATE, nullptr on CREATE.
std::vector<FieldError> WebhookFieldErrors(const Json& job, const Json* old,
                                           std::vector<std::string>* warnings);

// store::Validator. Returns:
//  - kInvalid (422) for the CRD's CEL rule, `PyTorchJob.kubeflow.org "x" is invalid: ...`,
//    like the API server's schema validation;
//  - kForbidden (403) for webhook denials, with the real API server's message
//    `admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the
//    request: <aggregate>` (one error: its text; several: `[e1, e2]`).
// Both carry details {name, group: kubeflow.org, kind: PyTorchJob, causes[{reason, message,
// field}]}. Appends the nProcPerNode deprecation warning to *warnings (may be null).
Status ValidatePyTorchJob(const Json& job, const Json* old, std::vector<std::string>* warnings);

}  // namespace pjemu::controller
