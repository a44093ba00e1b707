// What a job kind offers Kueue (its jobframework integration), beside the suspend switch its
// api::Workload row carries: the pod sets its Workload counts, how admission's placement goes
// into the job when it starts and comes out when it stops, and whether its pods are ready.
// A kind's descriptor points at one (KindDescriptor::queue); emulator/kueue reads them and never
// asks which kind a job is.
// Thread safety: immutable statics; the functions are pure but for pod_sets' reads.
#pragma once

#include <vector>

#include "emulator/api/kueue.h"
#include "emulator/client/client.h"
#include "emulator/common/status.h"

namespace pjemu::controller {

struct QueueIntegration {
  // The job's pod sets in Kueue's order, with their counts and templates as they are now (the
  // job suspended, no placement yet). It may read what the job refers to (a TrainJob's
  // runtime); errors: those reads'.
  Result<std::vector<api::kueue::PodSet>> (*pod_sets)(client::Client& client, const Json& job);
  // The job with each pod set's placement added and unsuspended (in one write). A placement
  // that conflicts with the job's own nodeSelector fails (api::kueue::Place's error).
  Result<Json> (*start)(Json job, const std::vector<api::kueue::PodSetPlacement>& placements);
  // The job suspended, with its pod sets' templates as `original` has them (the Workload's copy
  // taken before the start): Kueue's placement gone.
  Json (*stop)(Json job, const std::vector<api::kueue::PodSet>& original);
  // The Workload's PodsReady: every pod set's pods ready or succeeded (the kind's own reading).
  bool (*pods_ready)(const Json& job);
};

// For the kinds whose pod templates live in the job itself: start and stop over `templates`,
// which returns the templates of the job's pod sets in pod-set order, and the row's suspend
// switch (set_suspended).
Result<Json> StartTemplates(Json job, const std::vector<api::kueue::PodSetPlacement>& placements,
                            std::vector<Json*> (*templates)(Json& job),
                            void (*set_suspended)(Json& job, bool suspend));
Json StopTemplates(Json job, const std::vector<api::kueue::PodSet>& original,
                   std::vector<Json*> (*templates)(Json& job),
                   void (*set_suspended)(Json& job, bool suspend));

}  // namespace pjemu::controller
