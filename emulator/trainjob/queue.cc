// Kueue's trainer.kubeflow.org/trainjob integration: the pod sets are those of the JobSet the
// TrainJob's runtime yields (one per replicated job); admission's placement goes in as the
// runtimePatches entry of manager kueue.x-k8s.io/manager (per replicated job: the pod
// template's labels, annotations, nodeSelector and tolerations), which a stop removes; ready
// when the JobSet's Jobs are (jobsStatus: ready or succeeded Jobs cover the active ones).
#include "emulator/api/json_fields.h"
#include "emulator/api/jobset.h"
#include "emulator/api/trainjob.h"
#include "emulator/api/workload.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/trainjob/build.h"
#include "emulator/trainjob/trainjob.h"

namespace pjemu::trainjob {
namespace {

namespace atj = api::trainjob;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

Result<std::vector<api::kueue::PodSet>> TrainJobPodSets(client::Client& client, const Json& tj) {
  const auto [kind, name] = atj::RuntimeRef(tj);
  const bool cluster = kind != atj::kTrainingRuntime;
  Result<Json> runtime =
      client.Get(cluster ? api::ClusterTrainingRuntimes() : api::TrainingRuntimes(),
                 cluster ? "" : Str(Field(tj, "metadata"), "namespace"), name);
  if (!runtime.ok()) return runtime.status();
  return api::jobset::PodSets(DesiredJobSet(tj, *runtime));
}

// runtimePatches without Kueue's entry.
Json& DropKueuePatch(Json& tj) {
  Json& patches = tj["spec"]["runtimePatches"];
  if (!patches.is_array()) patches = Json::array();
  for (auto it = patches.begin(); it != patches.end();) {
    it = Str(*it, "manager") == api::kueue::kManager ? patches.erase(it) : it + 1;
  }
  return patches;
}

Result<Json> StartTrainJob(Json tj, const std::vector<api::kueue::PodSetPlacement>& placements) {
  Json rjobs = Json::array();
  for (const api::kueue::PodSetPlacement& p : placements) {
    Json pod_template = Json::object();
    RETURN_IF_ERROR(api::kueue::Place(pod_template, p));
    rjobs.push_back({{"name", p.name},
                     {"template", {{"spec", {{"template", std::move(pod_template)}}}}}});
  }
  DropKueuePatch(tj).push_back(
      {{"manager", api::kueue::kManager},
       {"trainingRuntimeSpec", {{"template", {{"spec", {{"replicatedJobs", rjobs}}}}}}}});
  api::SetSpecSuspended(tj, false);
  return tj;
}

Json StopTrainJob(Json tj, const std::vector<api::kueue::PodSet>&) {
  if (DropKueuePatch(tj).empty()) tj["spec"].erase("runtimePatches");
  api::SetSpecSuspended(tj, true);
  return tj;
}

bool JobsReady(const Json& tj) {
  std::int64_t ready = 0, active = 0;
  const Json& jobs = ArrayOr(FieldAt(tj, {"status", "jobsStatus"}));
  for (const Json& j : jobs) {
    ready += OptInt(j, "ready").value_or(0) + OptInt(j, "succeeded").value_or(0);
    active += OptInt(j, "active").value_or(0);
  }
  return !jobs.empty() && ready > 0 && ready >= active;
}

}  // namespace

extern const controller::QueueIntegration kQueue = {TrainJobPodSets, StartTrainJob, StopTrainJob,
                                                    JobsReady};

}  // namespace pjemu::trainjob
