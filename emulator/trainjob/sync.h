// One pass of Trainer v2.3.0's TrainJob reconciler as a pure function (BEHAVIOUR.md): given the
// stored, defaulted TrainJob (its .status the previous status), its runtime (nullptr: not
// found), its JobSet (nullptr: none yet), the PodGroup of its name (nullptr: none) and `now`,
// ComputeSync returns the new status, the ordered actions (the coscheduling plugin's PodGroup
// created, or updated while suspended; then the JobSet created, its suspend updated, deleted at
// the deadline; events) and when to look again (the active deadline).
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/controller/kind.h"

namespace pjemu::trainjob {

using controller::Action;
using controller::Sync;

// REQUIRES: trainjob was defaulted by admission (api::trainjob::SetDefaults).
// The PodGroup goes first: upstream applies its plugins' objects in Go map order (random), and
// pjemu picks the order in which the pods always find their group.
Sync ComputeSync(const Json& trainjob, const Json* runtime, const Json* jobset,
                 const Json* pod_group, Time now);

// When activeDeadlineSeconds runs out: from the last resume (the Suspended condition turned
// False), else from creation; nullopt without a deadline or while suspended.
std::optional<Time> DeadlineOf(const Json& trainjob);

}  // namespace pjemu::trainjob
