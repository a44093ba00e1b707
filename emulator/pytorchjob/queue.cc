// Kueue's kubeflow.org/pytorchjob integration: a pod set per replica type present, lower-cased,
// in the job's order, of `replicas` pods (default 1); ready when the job's Running condition is
// True.
#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/workload.h"
#include "emulator/common/strings.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/pytorchjob/pytorchjob.h"

namespace pjemu::pytorchjob {
namespace {

Result<std::vector<api::kueue::PodSet>> ReplicaPodSets(client::Client&, const Json& job) {
  std::vector<api::kueue::PodSet> out;
  for (const std::string& rtype : api::ReplicaTypes(job)) {
    const Json& spec = api::ReplicaSpec(job, rtype);
    out.push_back({AsciiLower(rtype), api::OptInt(spec, "replicas").value_or(1),
                   api::Field(spec, "template")});
  }
  return out;
}

std::vector<Json*> ReplicaTemplates(Json& job) {
  std::vector<Json*> out;
  for (const std::string& rtype : api::ReplicaTypes(job)) {
    out.push_back(&job["spec"]["pytorchReplicaSpecs"][rtype]["template"]);
  }
  return out;
}

Result<Json> StartPyTorchJob(Json job, const std::vector<api::kueue::PodSetPlacement>& placements) {
  return controller::StartTemplates(std::move(job), placements, ReplicaTemplates, api::SetSuspended);
}

Json StopPyTorchJob(Json job, const std::vector<api::kueue::PodSet>& original) {
  return controller::StopTemplates(std::move(job), original, ReplicaTemplates, api::SetSuspended);
}

bool Running(const Json& job) { return api::IsRunning(api::Field(job, "status")); }

}  // namespace

extern const controller::QueueIntegration kQueue = {ReplicaPodSets, StartPyTorchJob,
                                                    StopPyTorchJob, Running};

}  // namespace pjemu::pytorchjob
