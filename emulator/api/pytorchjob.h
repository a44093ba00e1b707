// The PyTorchJob's vocabulary (Kubeflow Training Operator v1.9.4, kubeflow.org/v1): the type's
// identity, the operator's names, labels and ports, the defaulting the operator applies in memory
// (SetDefaults) and small read helpers over a job in wire-form JSON. The controller, the CLI, the
// console and the scenario runner all read jobs through these.
// Thread safety: constants and pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

inline constexpr char kPyTorchJobGroup[] = "kubeflow.org";
inline constexpr char kPyTorchJobApiVersion[] = "kubeflow.org/v1";
inline constexpr char kPyTorchJobKind[] = "PyTorchJob";

// The operator's name: the operator-name label value on the objects it owns and the
// source.component of its events.
inline constexpr char kControllerName[] = "pytorchjob-controller";
inline constexpr char kDefaultContainerName[] = "pytorch";
inline constexpr char kDefaultPortName[] = "pytorchjob-port";
inline constexpr int kDefaultPort = 23456;
// The replica types.
inline constexpr char kMaster[] = "Master";
inline constexpr char kWorker[] = "Worker";

// Labels the operator puts on the pods and services of a job.
inline constexpr char kOperatorNameLabel[] = "training.kubeflow.org/operator-name";
inline constexpr char kJobNameLabel[] = "training.kubeflow.org/job-name";
inline constexpr char kReplicaTypeLabel[] = "training.kubeflow.org/replica-type";
inline constexpr char kReplicaIndexLabel[] = "training.kubeflow.org/replica-index";
inline constexpr char kJobRoleLabel[] = "training.kubeflow.org/job-role";
// The pre-v1 pytorch-operator's job label. pjemu adds it to pods so that
// `kubectl get pods -l pytorch_job_name=<job>` from older guides keeps working; v1.9.4 itself
// does not set it.
inline constexpr char kLegacyJobNameLabel[] = "pytorch_job_name";

// The CRD's scale subresource: what /scale reads and writes on a PyTorchJob, its row's
// ScalePaths (resources.cc). The API server implements /scale from the row; the controller only
// keeps the status fields filled.
inline constexpr char kScaleSpecReplicasPath[] = ".spec.pytorchReplicaSpecs.Worker.replicas";
inline constexpr char kScaleStatusReplicasPath[] = ".status.replicaStatuses.Worker.active";
inline constexpr char kScaleLabelSelectorPath[] = ".status.replicaStatuses.Worker.selector";

// runPolicy.managedBy values the webhook accepts.
inline constexpr char kManagedByTrainingOperator[] = "kubeflow.org/training-operator";
inline constexpr char kManagedByMultiKueue[] = "kueue.x-k8s.io/multikueue";

// SetDefaults_PyTorchJob: cleanPodPolicy None, replicas 1, restartPolicy OnFailure, the
// pytorchjob-port on the pytorch container, elastic min/max, nprocPerNode "auto", and replica
// keys renamed case-insensitively to Master/Worker. The operator applies it to its in-memory copy
// of the stored job; the stored object is never defaulted (what a client reads back is what it
// sent).
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
// restartPolicy of a replica spec ("" when absent).
std::string RestartPolicy(const Json& spec);
// runPolicy.suspend == true.
bool IsSuspended(const Json& job);
// Sets runPolicy.suspend (what Kueue writes to hold and release a queued job).
void SetSuspended(Json& job, bool suspend);
// Non-null when another controller manages the job (ManagedByExternalController): the value of
// runPolicy.managedBy unless it is absent or the training operator.
std::optional<std::string> ManagedByExternalController(const Json& job);
}  // namespace pjemu::api
