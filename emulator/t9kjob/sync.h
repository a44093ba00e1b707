// One pass of the PyTorchTrainingJob controller as a pure function (BEHAVIOUR.md): given the
// DEFAULTED job (its .status is the previous status), the pods, Services and TensorBoards it
// controls, and `now`, ComputeSync returns the new status, the ordered actions the reconciler
// carries out (events, creates, deletes), when to look again (activeDeadlineSeconds) and the
// error of a pod that cannot be made (bad procPerNode), reported after the status write.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/api/object_list.h"
#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/controller/kind.h"

namespace pjemu::t9kjob {

using controller::Action;
using controller::Sync;

struct Children {
  api::ObjectList pods;
  api::ObjectList services;
  api::ObjectList tensorboards;
};

// REQUIRES: job is defaulted (api::t9k::SetDefaults).
Sync ComputeSync(const Json& job, const Children& children, Time now);

// --- Pieces, table-tested on their own. ---

// ExitCode's rule: 130, 137, 138 and 143 are retryable.
bool IsRetryableExitCode(std::int64_t code);
// Whether a failed replica under `policy` is restarted (Always, OnFailure; ExitCode with a
// retryable code); Never never.
bool RestartsAfterFailure(const std::string& policy, std::int64_t exit_code);
// The replica phase of a pod (the pod's phase, "Creating" before it is bound to a node).
std::string ReplicaPhase(const Json& pod);

}  // namespace pjemu::t9kjob
