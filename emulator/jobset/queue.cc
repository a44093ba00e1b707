// Kueue's jobset.x-k8s.io/jobset integration: a pod set per replicated job (api::jobset::
// PodSets); ready when every replicated job's Jobs are ready or succeeded.
#include "emulator/api/jobset.h"
#include "emulator/api/workload.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/jobset/jobset.h"

namespace pjemu::jobset {
namespace {

Result<std::vector<api::kueue::PodSet>> JobSetPodSets(client::Client&, const Json& js) {
  return api::jobset::PodSets(js);
}

Result<Json> StartJobSet(Json js, const std::vector<api::kueue::PodSetPlacement>& placements) {
  return controller::StartTemplates(std::move(js), placements, api::jobset::PodTemplates,
                                    api::SetSpecSuspended);
}

Json StopJobSet(Json js, const std::vector<api::kueue::PodSet>& original) {
  return controller::StopTemplates(std::move(js), original, api::jobset::PodTemplates,
                                   api::SetSpecSuspended);
}

}  // namespace

extern const controller::QueueIntegration kQueue = {JobSetPodSets, StartJobSet, StopJobSet,
                                                    api::jobset::JobsReady};

}  // namespace pjemu::jobset
