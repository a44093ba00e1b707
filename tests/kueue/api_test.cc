// Kueue's objects as the API server takes them (defaults, refusals by field), its job webhooks
// and the names it derives (emulator/api/kueue.h).
#include "emulator/api/kueue.h"

#include <catch2/catch.hpp>

#include "emulator/api/resources.h"
#include "emulator/api/workload.h"
#include "emulator/common/clock.h"
#include "emulator/store/store.h"

namespace pjemu::api::kueue {
namespace {

TEST_CASE("names: a Workload is named after its job's kind, name and uid as Kueue names it",
          "[kueue][api]") {
  // Kueue's own test vector for a Job (pkg/controller/jobframework/workload_names_test.go) and
  // the same recipe for the other kinds.
  CHECK(WorkloadName("Job", "batch", "name", "uid") == "job-name-ef3a1");
  CHECK(WorkloadName("JobSet", "jobset.x-k8s.io", "name", "uid") == "jobset-name-c91ae");
  CHECK(WorkloadName("PyTorchJob", "kubeflow.org", "name", "uid") == "pytorchjob-name-e4de8");
  CHECK(WorkloadName("TrainJob", "trainer.kubeflow.org", "name", "uid") == "trainjob-name-55917");
  CHECK(WorkloadName("Job", "batch", std::string(300, 'a'), "uid").size() == 247 + 6);
}

Json Cq(Json spec) {
  return {{"apiVersion", kApiVersion}, {"kind", "ClusterQueue"}, {"metadata", {{"name", "cq"}}},
          {"spec", spec}};
}

Json Group(Json resources, Json covered = {"nvidia.com/gpu"}) {
  return Json::array({{{"coveredResources", covered},
                       {"flavors", {{{"name", "gpu"}, {"resources", resources}}}}}});
}

TEST_CASE("ClusterQueue: Kueue's defaults, and refusals naming the field", "[kueue][api]") {
  Json cq = Cq({{"resourceGroups", Group({{{"name", "nvidia.com/gpu"}, {"nominalQuota", 2}}})}});
  DefaultClusterQueue(cq);
  CHECK(cq["spec"]["queueingStrategy"] == "BestEffortFIFO");
  CHECK(cq["spec"]["preemption"] == Json::parse(R"({"borrowWithinCohort":{"policy":"Never"},
        "reclaimWithinCohort":"Never","withinClusterQueue":"Never"})"));
  CHECK(cq["spec"]["flavorFungibility"]["whenCanBorrow"] == "MayStopSearch");
  CHECK(ValidateClusterQueue(cq, nullptr, nullptr).ok());

  Status s = ValidateClusterQueue(
      Cq({{"resourceGroups", Group({{{"name", "nvidia.com/gpu"}, {"nominalQuota", "-1"}}})}}),
      nullptr, nullptr);
  CHECK(s.code() == Code::kForbidden);
  CHECK(s.message() ==
        "admission webhook \"vclusterqueue.kb.io\" denied the request: "
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-1\": "
        "must be greater than or equal to 0");
  s = ValidateClusterQueue(
      Cq({{"resourceGroups", Group({{{"name", "cpu"}, {"nominalQuota", 2}}})}}), nullptr, nullptr);
  CHECK(s.message().find("spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: "
                         "\"cpu\": must match the name in coveredResources") != std::string::npos);
  s = ValidateClusterQueue(
      Cq({{"resourceGroups",
           Group({{{"name", "nvidia.com/gpu"}, {"nominalQuota", 2}, {"borrowingLimit", 1}}})}}),
      nullptr, nullptr);
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message().find("borrowingLimit must be nil when cohort is empty") != std::string::npos);
  s = ValidateClusterQueue(
      Cq({{"cohortName", "org"},
          {"resourceGroups",
           Group({{{"name", "nvidia.com/gpu"}, {"nominalQuota", 2}, {"lendingLimit", 3}}})}}),
      nullptr, nullptr);
  CHECK(s.message().find("lendingLimit: Invalid value: \"3\": must be less than or equal to the "
                         "nominalQuota") != std::string::npos);
  s = ValidateClusterQueue(Cq({{"queueingStrategy", "LIFO"}}), nullptr, nullptr);
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message().find("spec.queueingStrategy: Unsupported value: \"LIFO\"") != std::string::npos);
}

TEST_CASE("LocalQueue: clusterQueue required and immutable, Workload and flavor limits",
          "[kueue][api]") {
  Json lq = {{"apiVersion", kApiVersion}, {"kind", "LocalQueue"},
             {"metadata", {{"name", "lq"}, {"namespace", "default"}}}, {"spec", Json::object()}};
  CHECK(ValidateLocalQueue(lq, nullptr, nullptr).message().find("spec.clusterQueue: Required value") !=
        std::string::npos);
  lq["spec"]["clusterQueue"] = "a";
  Json moved = lq;
  moved["spec"]["clusterQueue"] = "b";
  CHECK(ValidateLocalQueue(moved, &lq, nullptr).message().find(
            "spec.clusterQueue: Invalid value: \"b\": field is immutable") != std::string::npos);
  Json wl = {{"metadata", {{"name", "w"}, {"namespace", "default"}}},
             {"spec", {{"podSets", {{{"count", 1}, {"minCount", 1}}, {{"name", "b"}, {"minCount", 1}}}}}}};
  DefaultWorkload(wl);
  CHECK(wl["spec"]["podSets"][0]["name"] == "main");
  CHECK(wl["spec"]["active"] == true);
  CHECK(ValidateWorkload(wl, nullptr, nullptr).message().find("at most one podSet can use minCount") !=
        std::string::npos);
  Json rf = {{"metadata", {{"name", "f"}}},
             {"spec", {{"nodeTaints", {{{"key", "k"}, {"effect", "Sometimes"}}}}}}};
  CHECK(ValidateResourceFlavor(rf, nullptr, nullptr).message().find(
            "spec.nodeTaints[0].effect: Unsupported value: \"Sometimes\"") != std::string::npos);
  CHECK(ValidateWorkloadPriorityClass({{"metadata", {{"name", "p"}}}}, nullptr, nullptr)
            .message()
            .find("value: Required value") != std::string::npos);
}

TEST_CASE("v1beta1: converted to and from the stored v1beta2 as Kueue converts", "[kueue][api]") {
  Json cq = Json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
    "metadata": {"name": "cq"}, "spec": {"cohort": "org", "admissionChecks": ["prov"],
    "flavorFungibility": {"whenCanBorrow": "Borrow"}}})");
  V1beta1ToStored(cq);
  CHECK(cq["apiVersion"] == kApiVersion);
  CHECK(cq["spec"] == Json::parse(R"({"cohortName": "org",
    "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]},
    "flavorFungibility": {"whenCanBorrow": "MayStopSearch"}})"));
  V1beta1FromStored(cq);
  CHECK(cq["apiVersion"] == "kueue.x-k8s.io/v1beta1");
  CHECK(cq["spec"]["cohort"] == "org");
  CHECK(cq["spec"]["admissionChecks"] == Json::array({"prov"}));
  Json wl = {{"apiVersion", kApiVersion},
             {"kind", "Workload"},
             {"spec",
              {{"priorityClassRef",
                {{"group", kGroup}, {"kind", "WorkloadPriorityClass"}, {"name", "urgent"}}}}},
             {"status", {{"accumulatedPastExecutionTimeSeconds", 5}}}};
  V1beta1FromStored(wl);
  CHECK(wl["spec"] == Json::parse(R"({"priorityClassName": "urgent",
    "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass"})"));
  CHECK(wl["status"]["accumulatedPastExexcutionTimeSeconds"] == 5);  // v1beta1's spelling
  V1beta1ToStored(wl);
  CHECK(wl["spec"]["priorityClassRef"]["name"] == "urgent");
  Json lq = {{"kind", "LocalQueue"},
             {"status", {{"flavorUsage", Json::array()}, {"flavors", Json::array()}}}};
  V1beta1ToStored(lq);  // a partial object (a merge patch): no apiVersion added
  CHECK(lq == Json::parse(R"({"kind": "LocalQueue", "status": {"flavorsUsage": []}})"));
  CHECK(ClusterQueues().OlderVersion("v1beta1")->deprecation_warning ==
        "This version is deprecated. Use v1beta2 instead.");
  CHECK(ClusterQueues().Serves("v1beta2"));
  CHECK_FALSE(ClusterQueues().Serves("v1alpha1"));
}

Json QueuedJob(const std::string& queue) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "j"}, {"namespace", "default"}, {"labels", {{kQueueNameLabel, queue}}}}},
          {"spec", {{"template", {{"spec", {{"restartPolicy", "Never"},
                                            {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
}

TEST_CASE("job webhooks: a queued job is created suspended, its queue fixed while it runs",
          "[kueue][api]") {
  FakeClock clock;
  store::Store store(clock);
  auto created = store.Create(Jobs(), "default", QueuedJob("lq"));
  REQUIRE(created.ok());
  CHECK((*created)["spec"]["suspend"] == true);
  // Unlabelled, or in kube-system: left alone.
  Json plain = QueuedJob("lq");
  plain["metadata"]["name"] = "plain";
  plain["metadata"].erase("labels");
  CHECK(store.Create(Jobs(), "default", plain)->at("spec").at("suspend") == false);
  // Suspended: the queue may change. Running: it may not.
  Json moved = *created;
  moved["metadata"]["labels"][kQueueNameLabel] = "other";
  auto updated = store.Update(Jobs(), "default", moved);
  REQUIRE(updated.ok());
  Json running = *updated;
  running["spec"]["suspend"] = false;
  running = *store.Update(Jobs(), "default", running);
  running["metadata"]["labels"][kQueueNameLabel] = "third";
  Status refused = store.Update(Jobs(), "default", running).status();
  CHECK(refused.code() == Code::kForbidden);
  CHECK(refused.message() ==
        "admission webhook \"vjob.kb.io\" denied the request: "
        "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"third\": field is immutable");
  Json bad = QueuedJob("Not_A_Name");
  bad["metadata"]["name"] = "bad";
  CHECK(store.Create(Jobs(), "default", bad).status().message().find(
            "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Not_A_Name\"") !=
        std::string::npos);
  // T9k's kind is not a Kueue integration: its label does nothing.
  CHECK(PyTorchTrainingJobs().workload->queue_framework == nullptr);
}

}  // namespace
}  // namespace pjemu::api::kueue
