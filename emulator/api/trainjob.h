// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1, v2.3.0): TrainJob, TrainingRuntime and
// ClusterTrainingRuntime. The vocabulary the trainer controller, its webhook and its users
// share (labels, the torch plugin's PET_* env and port, condition types, reasons, messages),
// the CRDs' defaults and CEL rules and the webhook's checks (the resource table's admission),
// the default `torch-distributed` runtime the operator's manifests install, and status
// predicates. What the controller does with it: emulator/trainjob/BEHAVIOUR.md.
// Thread safety: pure functions over values; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/field_schema.h"
#include "emulator/common/status.h"

namespace pjemu::api::trainjob {

inline constexpr char kGroup[] = "trainer.kubeflow.org";
inline constexpr char kApiVersion[] = "trainer.kubeflow.org/v1alpha1";
inline constexpr char kKind[] = "TrainJob";
inline constexpr char kTrainingRuntime[] = "TrainingRuntime";
inline constexpr char kClusterTrainingRuntime[] = "ClusterTrainingRuntime";
// The trainer controller manager's event recorder name.
inline constexpr char kControllerName[] = "trainer-controller-manager";
inline constexpr char kManagedByDefault[] = "trainer.kubeflow.org/trainjob-controller";
inline constexpr char kWebhookName[] = "validator.trainjob.trainer.kubeflow.org";

// The runtime the operator's manifests install, and its image (manifests/base/runtimes).
inline constexpr char kDefaultRuntime[] = "torch-distributed";
inline constexpr char kDefaultRuntimeImage[] = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime";

// The replicatedJob label that marks the trainer step, the trainer Job's and container's name.
inline constexpr char kAncestorLabel[] = "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr char kAncestorTrainer[] = "trainer";
inline constexpr char kNode[] = "node";
inline constexpr int kTrainerPort = 29500;  // ContainerTrainerPort

// The torch plugin's env for torchrun (its own argument variables); the webhook reserves them.
inline constexpr char kEnvNumNodes[] = "PET_NNODES";
inline constexpr char kEnvNumProcPerNode[] = "PET_NPROC_PER_NODE";
inline constexpr char kEnvNodeRank[] = "PET_NODE_RANK";
inline constexpr char kEnvMasterAddr[] = "PET_MASTER_ADDR";
inline constexpr char kEnvMasterPort[] = "PET_MASTER_PORT";

// Condition types, reasons and messages.
inline constexpr char kComplete[] = "Complete";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kSuspended[] = "Suspended";
inline constexpr char kSuspendedReason[] = "Suspended";
inline constexpr char kSuspendedMessage[] = "TrainJob is suspended";
inline constexpr char kResumedReason[] = "Resumed";
inline constexpr char kResumedMessage[] = "TrainJob is resumed";
inline constexpr char kDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kDeadlineExceededMessage[] = "TrainJob exceeded its active deadline";

// The CRD's defaults (applied by the API server on every write): runtimeRef.apiGroup
// trainer.kubeflow.org and kind ClusterTrainingRuntime, suspend false, managedBy the trainjob
// controller.
void SetDefaults(Json& trainjob);

// The CRD's rules (422 `TrainJob.trainer.kubeflow.org "x" is invalid`): the name an RFC 1035
// label of at most 63 characters, runtimeRef.name required, numNodes and numProcPerNode at
// least 1, runtimePatches at most 16 with a unique `manager` each and keyed list items naming
// their keys; on update runtimeRef, initializer, trainer, activeDeadlineSeconds and managedBy are
// immutable ("field is immutable"). Then the webhook's torch checks (403 `admission webhook
// "validator.trainjob.trainer.kubeflow.org" denied the request`): no PET_* of the plugin's in
// trainer.env ("must not have reserved envs, invalid envs configured: [..]").
Status Validate(const Json& trainjob, const Json* old, std::vector<std::string>* warnings);
std::vector<FieldError> CelErrors(const Json& trainjob, const Json* old);
std::vector<FieldError> WebhookErrors(const Json& trainjob);

// At most this many runtimePatches (the CRD's maxItems), keyed by `manager`.
inline constexpr std::size_t kMaxRuntimePatches = 16;
// How a runtimePatch's trainingRuntimeSpec merges over the runtime's spec: as server-side apply
// merges (structured_merge.h) under the TrainingRuntimeSpec's list markers: replicatedJobs by
// name, the pod template's containers, env, volumes, ... by their keys (core/v1's markers),
// label and annotation maps key by key, anything else replaced.
const FieldSchema& RuntimeSpecSchema();

// The `torch-distributed` ClusterTrainingRuntime as v2.3.0's manifests install it: mlPolicy
// {numNodes: 1, torch: {}}, one replicatedJob `node` (ancestor label `trainer`) with container
// `node`, kDefaultRuntimeImage, no command.
Json DefaultClusterTrainingRuntime();

// podGroupPolicy on a (Cluster)TrainingRuntime (v2.3.0's CRDs): one of `coscheduling
// {scheduleTimeoutSeconds}` (scheduler-plugins' PodGroup, emulator/trainjob/coscheduling.h) or
// `volcano {networkTopology {mode, highestTierAllowed}}` (not emulated). The CRDs carry no rule
// that only one is set and no webhook checks the policy: its schema is all there is.
inline constexpr int kDefaultScheduleTimeoutSeconds = 60;
// The runtime CRDs' defaults: podGroupPolicy.coscheduling.scheduleTimeoutSeconds 60;
// volcano.networkTopology mode `hard`, highestTierAllowed 1.
void SetRuntimeDefaults(Json& runtime);
// The runtime CRDs' schema for podGroupPolicy (422 `TrainingRuntime.trainer.kubeflow.org "x" is
// invalid: <field>: ...`, or ClusterTrainingRuntime's): podGroupPolicy, coscheduling, volcano
// and networkTopology objects, scheduleTimeoutSeconds and highestTierAllowed integers
// (`<field> in body must be of type integer: "string"`), mode `hard` or `soft`.
// Not yet in the resource table's rows for the runtimes (api/resources.cc): call it from there.
Status ValidateRuntime(const Json& runtime, const Json* old, std::vector<std::string>* warnings);
std::vector<FieldError> RuntimeSchemaErrors(const Json& runtime);
// The runtime's podGroupPolicy.coscheduling, or nullptr when it has none.
const Json* Coscheduling(const Json& runtime);
// Its scheduleTimeoutSeconds: the runtime's integer, else the CRD's default.
int ScheduleTimeoutSeconds(const Json& coscheduling);

// The runtime a TrainJob names: (kind, name), kind defaulting to ClusterTrainingRuntime.
std::pair<std::string, std::string> RuntimeRef(const Json& trainjob);

// Complete or Failed is True.
bool IsFinished(const Json& trainjob);

}  // namespace pjemu::api::trainjob
