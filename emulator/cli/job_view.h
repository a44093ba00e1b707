// Read-only views of PyTorchJob and Pod JSON for the CLI's progress lines, tables and exit
// codes: the job's state as the operator's printer column shows it, and a pod's STATUS and
// RESTARTS the way `kubectl get pods` computes them.
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::cli {

// The type of the last condition (the CRD's State column: api::JobState), "" if none.
std::string JobState(const Json& job);
// "Succeeded" or "Failed" when that condition is True (api::FinalCondition), nullopt while the
// job runs.
std::optional<std::string> JobOutcome(const Json& job);
// The message of the condition of that type ("" if none).
std::string ConditionMessage(const Json& job, const std::string& type);
// Sum of container restartCounts of a pod.
std::int64_t PodRestarts(const Json& pod);
// kubectl's STATUS column (api::PodStatusText): a waiting/terminated reason (ErrImagePull,
// Completed, Error, CrashLoopBackOff, Init:0/1, Signal:9, ...) when one is set, else the phase;
// "Terminating" when being deleted.
std::string PodStatusText(const Json& pod);
// The waiting reason and message of the first container that has one (for the image errors
// that a run cannot recover from), or nullopt.
struct WaitingInfo {
  std::string container;
  std::string reason;
  std::string message;
};
std::optional<WaitingInfo> PodWaiting(const Json& pod);
// Why a pod is not progressing, as `kubectl describe` would show it: the message of a False
// PodScheduled condition (`0/1 nodes are available: persistentvolumeclaim "x" not found.`),
// else the first waiting container's message (`secret "tok" not found`); "" when none.
std::string PodHoldMessage(const Json& pod);
// Time from .status.startTime (or creationTimestamp) to .status.completionTime (or now).
Duration JobDuration(const Json& job, Time now);

}  // namespace pjemu::cli
