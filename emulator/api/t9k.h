// T9k's PyTorchTrainingJob (batch.tensorstack.dev/v1beta1) and the TensorBoard it asks for
// (tensorstack.dev/v1beta1): the kinds' identity, the names and labels their controller uses,
// the defaults it applies in memory and small read helpers over a job in wire-form JSON.
// T9k's controller is closed source: every value here is either documented publicly (user
// manuals, API reference, tutorial YAMLs and screenshots) or, where the record is silent, a
// named assumption taken from the Kubeflow operator (README "Assumptions about T9k").
// Thread safety: constants and pure functions over values; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api::t9k {

inline constexpr char kGroup[] = "batch.tensorstack.dev";
inline constexpr char kApiVersion[] = "batch.tensorstack.dev/v1beta1";
inline constexpr char kKind[] = "PyTorchTrainingJob";
inline constexpr char kTensorBoardApiVersion[] = "tensorstack.dev/v1beta1";
inline constexpr char kTensorBoardKind[] = "TensorBoard";

// The controller's name: source.component of its events.
inline constexpr char kControllerName[] = "t9k-job-controller";
// The label every pod of a job carries (the tutorial's `kubectl logs -l` selector).
inline constexpr char kOwnerNameLabel[] = "tensorstack.dev/owner-name";
// Assumption: the pods also carry the owner kind, the replica type and index, as the
// Kubeflow operator's do (its four labels under tensorstack.dev/).
inline constexpr char kOwnerKindLabel[] = "tensorstack.dev/owner-kind";
inline constexpr char kReplicaTypeLabel[] = "tensorstack.dev/replica-type";
inline constexpr char kReplicaIndexLabel[] = "tensorstack.dev/replica-index";
// Seen on T9k's console (spec §4.1, §4.3): `job-role: master` on the master pod only, beside
// the replica type and index (under the same prefix, as they are here).
inline constexpr char kJobRoleLabel[] = "tensorstack.dev/job-role";
inline constexpr char kMasterRole[] = "master";

// Assumption (Kubeflow operator): the master's port and its name on the container and Service.
inline constexpr int kMasterPort = 23456;
inline constexpr char kPortName[] = "pytorchjob-port";
// The default torchrun rendezvous backend (API reference) and the default job-wide backoff
// limit (user manual).
inline constexpr char kDefaultRdzvBackend[] = "c10d";
inline constexpr std::int64_t kDefaultBackoffLimit = 3;
// Exit codes ExitCode restarts: SIGINT, SIGKILL, SIGUSR2 and SIGTERM as 128 + n (manual).
inline constexpr int kRetryableExitCodes[] = {130, 137, 138, 143};
// Debug mode's default command (API reference).
inline constexpr char kDebugCommand[] = "sleep";
inline constexpr char kDebugArg[] = "inf";

// Phases (user manual: seven values).
inline constexpr char kPending[] = "Pending";
inline constexpr char kRunning[] = "Running";
inline constexpr char kPaused[] = "Paused";
inline constexpr char kResuming[] = "Resuming";
inline constexpr char kSucceeded[] = "Succeeded";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kUnknown[] = "Unknown";
// Condition types.
inline constexpr char kInitialized[] = "Initialized";
inline constexpr char kCondRunning[] = "Running";
inline constexpr char kReplicaFailure[] = "ReplicaFailure";
inline constexpr char kCompleted[] = "Completed";
inline constexpr char kCondFailed[] = "Failed";
inline constexpr char kCondPaused[] = "Paused";

// The in-memory defaults: replicas 1, restartPolicy OnFailure, runPolicy.backoffLimit 3,
// cleanUpPolicy None, torchrunConfig.rdzvBackend c10d, the legacy `enable` spellings read as
// `enabled`. The stored object is never defaulted.
Json SetDefaults(Json job);

// spec.replicaSpecs (an array; empty when absent).
const Json& ReplicaSpecs(const Json& job);
// replicas of a (defaulted) replica spec; elastic jobs: the first spec's expectedReplicas.
std::int64_t Replicas(const Json& job, std::size_t spec_index);
// Lower-cased replica type as it appears in names and labels ("node", "worker").
std::string TypeName(const Json& rspec);
// restartPolicy of a (defaulted) replica spec.
std::string RestartPolicy(const Json& rspec);
bool TorchrunEnabled(const Json& job);
bool ElasticEnabled(const Json& job);
bool DebugEnabled(const Json& job);
bool PauseEnabled(const Json& job);
// runMode.debug.replicaSpecs[type] / runMode.pause.resumeSpecs[type]; null when absent.
const Json& DebugSpecFor(const Json& job, const std::string& type);
const Json& ResumeSpecFor(const Json& job, const std::string& type);
// torchrunConfig.procPerNode as a count: a number, or "gpu": the replica's nvidia.com/gpu
// limit (request) of its first container, at least 1. Errors: kInvalid for anything else.
Result<std::int64_t> ProcPerNode(const Json& job, const Json& rspec);

// The job's phase (.status.phase), "" before the controller's first status write.
std::string Phase(const Json& job);
// The 5 lower-case hex characters every child of the job carries (`<job>-<suffix>-node-0`, the
// TensorBoard `<job>-<suffix>`). Assumption: a hash of the job's UID (T9k's are random per job;
// a function of the UID keeps them stable across controller restarts without a stored field).
std::string NameSuffix(const Json& job);

}  // namespace pjemu::api::t9k
