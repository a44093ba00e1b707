// Kueue's batch/job integration: one pod set `main` of min(parallelism, completions) pods, the
// Job's template without the labels the Job controller owns; ready when succeeded + ready pods
// reach that count.
#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/workload.h"
#include "emulator/batchjob/batchjob.h"
#include "emulator/controller/queue_integration.h"

namespace pjemu::batchjob {
namespace {

using api::Field, api::FieldAt, api::OptInt;

std::int64_t PodCount(const Json& job) {
  const Json& spec = Field(job, "spec");
  const std::int64_t parallelism = OptInt(spec, "parallelism").value_or(1);
  const std::optional<std::int64_t> completions = OptInt(spec, "completions");
  return completions ? std::min(parallelism, *completions) : parallelism;
}

std::vector<Json*> JobTemplates(Json& job) { return {&job["spec"]["template"]}; }

Result<std::vector<api::kueue::PodSet>> JobPodSets(client::Client&, const Json& job) {
  Json pod_template = FieldAt(job, {"spec", "template"});
  if (pod_template["metadata"]["labels"].is_object()) {
    for (const char* key : {api::batchjob::kLegacyJobNameLabel,
                            api::batchjob::kLegacyControllerUidLabel,
                            api::batchjob::kJobNameLabel, api::batchjob::kControllerUidLabel}) {
      pod_template["metadata"]["labels"].erase(key);
    }
  }
  return std::vector<api::kueue::PodSet>{{"main", PodCount(job), std::move(pod_template)}};
}

Result<Json> StartJob(Json job, const std::vector<api::kueue::PodSetPlacement>& placements) {
  return controller::StartTemplates(std::move(job), placements, JobTemplates,
                                    api::SetSpecSuspended);
}

Json StopJob(Json job, const std::vector<api::kueue::PodSet>& original) {
  return controller::StopTemplates(std::move(job), original, JobTemplates, api::SetSpecSuspended);
}

bool JobPodsReady(const Json& job) {
  const Json& status = Field(job, "status");
  return OptInt(status, "succeeded").value_or(0) + OptInt(status, "ready").value_or(0) >=
         PodCount(job);
}

}  // namespace

extern const controller::QueueIntegration kQueue = {JobPodSets, StartJob, StopJob, JobPodsReady};

}  // namespace pjemu::batchjob
