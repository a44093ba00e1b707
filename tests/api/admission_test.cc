// Given the resource table, each type should carry its own admission: the PyTorchJob the
// operator's webhook, the core config/storage types and pods the API server's, the rest none.
#include <algorithm>
#include <catch2/catch.hpp>

#include "emulator/api/kueue.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/resources.h"

namespace pjemu::api {
namespace {

Json Job(int master_replicas) {
  Json container = {{"name", kDefaultContainerName}, {"image", "busybox"}};
  Json master = {{"replicas", master_replicas},
                 {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
  return {{"apiVersion", kPyTorchJobApiVersion},
          {"kind", kPyTorchJobKind},
          {"metadata", {{"name", "j"}}},
          {"spec", {{"pytorchReplicaSpecs", {{kMaster, master}}}}}};
}

TEST_CASE("the PyTorchJob row admits through the operator's webhook", "[api]") {
  const ResourceType* type = FindByKind(kPyTorchJobApiVersion, kPyTorchJobKind);
  REQUIRE(type != nullptr);
  CHECK(type == &PyTorchJobs());
  CHECK(type->admission.defaulter == nullptr);  // the operator defaults in memory only
  REQUIRE(type->admission.validator == &ValidatePyTorchJob);
  std::vector<std::string> warnings;
  CHECK(type->admission.validator(Job(1), nullptr, &warnings).ok());
  Status refused = type->admission.validator(Job(2), nullptr, &warnings);
  CHECK(refused.code() == Code::kForbidden);
  CHECK(refused.message() ==
        "admission webhook \"validator.pytorchjob.training-operator.kubeflow.org\" denied the "
        "request: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1");
  CHECK(refused.details()["causes"][0]["field"] == "spec.pytorchReplicaSpecs[Master].replicas");
  CHECK(warnings.empty());
}

TEST_CASE("no other served type has an admission", "[api]") {
  // Pods (volumes), ConfigMaps, Secrets, PVCs, PVs, StorageClasses and PodDisruptionBudgets
  // carry the API server's own admission: config_validation_test.cc, pod_validation_test.cc and
  // disruption_test.cc; batch/v1 Jobs tests/batchjob/sync_test.cc.
  const std::vector<const ResourceType*> admitted = {&PyTorchJobs(),
                                                     &Pods(),
                                                     &ConfigMaps(),
                                                     &Secrets(),
                                                     &PersistentVolumeClaims(),
                                                     &PersistentVolumes(),
                                                     &StorageClasses(),
                                                     &PodDisruptionBudgets(),
                                                     &PyTorchTrainingJobs(),
                                                     &Jobs(),
                                                     &TrainJobs(),
                                                     &JobSets(),
                                                     &SchedulerPluginsPodGroups(),
                                                     &VolcanoPodGroups(),
                                                     &TrainingRuntimes(),
                                                     &ClusterTrainingRuntimes(),
                                                     &kueue::ResourceFlavors(),
                                                     &kueue::ClusterQueues(),
                                                     &kueue::LocalQueues(),
                                                     &kueue::Workloads(),
                                                     &kueue::WorkloadPriorityClasses()};
  for (const ResourceType& type : AllResources()) {
    if (std::find(admitted.begin(), admitted.end(), &type) != admitted.end()) {
      CHECK(type.admission.validator != nullptr);
      continue;
    }
    CAPTURE(type.kind);
    CHECK(type.admission.defaulter == nullptr);
    CHECK(type.admission.validator == nullptr);
  }
}

TEST_CASE("the defaults the operator applies in memory", "[api]") {
  Json job = Job(1);
  job["spec"]["pytorchReplicaSpecs"]["worker"] = job["spec"]["pytorchReplicaSpecs"][kMaster];
  Json d = SetDefaults(job);
  CHECK(d["spec"]["runPolicy"]["cleanPodPolicy"] == "None");
  CHECK(d["spec"]["nprocPerNode"] == "auto");
  CHECK(ReplicaTypes(d) == std::vector<std::string>{kMaster, kWorker});
  CHECK(RestartPolicy(ReplicaSpec(d, kWorker)) == "OnFailure");
  CHECK(ReplicaSpec(d, kWorker)["template"]["spec"]["containers"][0]["ports"] ==
        Json::array({Json{{"name", kDefaultPortName}, {"containerPort", kDefaultPort}}}));
  CHECK(TotalReplicas(d) == 2);
}

}  // namespace
}  // namespace pjemu::api
