// Job spec vocabulary of the PyTorchJob controller: the operator's constants (labels, names,
// ports), in-memory defaulting (SetDefaults_PyTorchJob, spec 1.4) and small read helpers over a
// PyTorchJob in wire-form JSON. Used by validation, desired objects, job status and the reconciler.
// Thread safety: pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::controller {

inline constexpr char kControllerName[] = "pytorchjob-controller";
inline constexpr char kDefaultContainerName[] = "pytorch";
inline constexpr char kDefaultPortName[] = "pytorchjob-port";
inline constexpr int kDefaultPort = 23456;
inline constexpr char kMaster[] = "Master";
inline constexpr char kWorker[] = "Worker";
inline constexpr char kKind[] = "PyTorchJob";
inline constexpr char kApiVersion[] = "kubeflow.org/v1";

inline constexpr char kOperatorNameLabel[] = "training.kubeflow.org/operator-name";
inline constexpr char kJobNameLabel[] = "training.kubeflow.org/job-name";
inline constexpr char kReplicaTypeLabel[] = "training.kubeflow.org/replica-type";
inline constexpr char kReplicaIndexLabel[] = "training.kubeflow.org/replica-index";
inline constexpr char kJobRoleLabel[] = "training.kubeflow.org/job-role";
// The pre-v1 pytorch-operator's job label (spec 13). pjemu adds it to pods so the seeds'
// `kubectl get pods -l pytorch_job_name=<job>` keeps working; v1.9.4 itself does not set it.
inline constexpr char kLegacyJobNameLabel[] = "pytorch_job_name";

// The CRD's scale subresource (spec 1.1 item 2): what /scale reads and writes on a PyTorchJob.
// The API server implements /scale; the controller only keeps the status fields filled.
inline constexpr char kScaleSpecReplicasPath[] = ".spec.pytorchReplicaSpecs.Worker.replicas";
inline constexpr char kScaleStatusReplicasPath[] = ".status.replicaStatuses.Worker.active";
inline constexpr char kScaleLabelSelectorPath[] = ".status.replicaStatuses.Worker.selector";

inline constexpr char kManagedByTrainingOperator[] = "kubeflow.org/training-operator";
inline constexpr char kManagedByMultiKueue[] = "kueue.x-k8s.io/multikueue";

// SetDefaults_PyTorchJob: cleanPodPolicy None, replicas 1, restartPolicy OnFailure, the
// pytorchjob-port on the pytorch container, elastic min/max, nprocPerNode "auto", and replica
// keys renamed case-insensitively to Master/Worker. The input is the stored job; the result
// lives only in the controller's memory (spec 11).
Json SetDefaults(Json job);

// The replica types of spec.pytorchReplicaSpecs in a fixed order (Master first, then the rest
// sorted); upstream iterates a Go map, so any fixed order is one the real operator can take.
std::vector<std::string> ReplicaTypes(const Json& job);
// spec.pytorchReplicaSpecs[rtype] or null.
const Json& ReplicaSpec(const Json& job, const std::string& rtype);
bool HasMaster(const Json& job);
// replicas of a (defaulted) replica spec; 1 when absent.
std::int64_t Replicas(const Json& spec);
// Sum of replicas over all replica types.
std::int64_t TotalReplicas(const Json& job);
std::string RestartPolicy(const Json& spec);

// "<job>-<lower(rtype)>-<index>" with '/' replaced by '-' (GenGeneralName).
std::string GenGeneralName(const std::string& job, const std::string& rtype,
                           const std::string& index);
std::string Lower(std::string s);
// {operator-name, job-name} (GenLabels).
Json GenLabels(const std::string& job_name);
// "training.kubeflow.org/job-name=<job>,...operator-name=...,...replica-type=<rt>" (sorted keys).
std::string ReplicaSelector(const std::string& job_name, const std::string& rtype);
// The controller owner reference for objects the job owns.
Json OwnerReference(const Json& job);

// The containerPort of the pytorchjob-port of the pytorch container of rtype; kNotFound if none.
Result<std::int64_t> PortFromJob(const Json& job, const std::string& rtype);
// runPolicy.suspend == true.
bool IsSuspended(const Json& job);
// Non-null when another controller manages the job (ManagedByExternalController): the value of
// runPolicy.managedBy unless it is absent or the training operator.
std::optional<std::string> ManagedByExternalController(const Json& job);
// The ExitCode policy's rule: codes >= 128 are retryable.
inline bool IsRetryableExitCode(std::int64_t code) { return code >= 128; }
// Reads an optional integer field (JSON number); nullopt when absent or not a number.
std::optional<std::int64_t> OptInt(const Json& obj, const char* key);
// obj[key], or null when obj is not an object or lacks the key (never throws).
const Json& Field(const Json& obj, const char* key);
// obj[key] as a string; "" when absent or not a string (never throws).
std::string Str(const Json& obj, const char* key);

}  // namespace pjemu::controller
