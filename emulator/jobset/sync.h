// One pass of the JobSet controller (jobset_controller.go Reconcile) as a pure function
// (BEHAVIOUR.md): given the stored, webhook-defaulted JobSet (its .status the previous status),
// the batch/v1 Jobs it controls, whether its headless Service exists, and `now`, ComputeSync
// returns the new status and the ordered actions the reconciler carries out. The pass follows
// upstream's order: finished -> delete active Jobs and stop; delete Jobs of earlier restart
// attempts; failure policy; success policy; the headless Service; create missing Jobs;
// suspend or resume.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/api/object_list.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/controller/kind.h"

namespace pjemu::jobset {

using controller::Action;
using controller::Sync;

// REQUIRES: js was defaulted by admission (api::jobset::SetDefaults).
Sync ComputeSync(const Json& js, const api::ObjectList& jobs, bool service_exists, Time now);

// --- Pieces, tested on their own. ---

// Child Job `index` of replicatedJob `rjob` for the current restart attempt, ready for
// Client::Create: name `<js>-<rjob>-<index>`, the template's labels and annotations plus
// JobSet's (jobset-name, replicatedjob-name, job-index, restart-attempt, ...) on the Job and its
// pod template, the pod subdomain, spec.suspend from the JobSet, the controller ownerReference.
Json DesiredJob(const Json& js, const Json& rjob, std::int64_t index);
// The headless Service named Subdomain(js): clusterIP None, selector jobset-name,
// publishNotReadyAddresses, the controller ownerReference.
Json DesiredService(const Json& js);

}  // namespace pjemu::jobset
