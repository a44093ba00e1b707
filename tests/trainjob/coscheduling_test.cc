// Given a runtime with podGroupPolicy.coscheduling, the TrainJob controller should label every
// pod template of the JobSet with the TrainJob's pod group and make the scheduler-plugins
// PodGroup Trainer v2.3.0's coscheduling plugin makes, before the JobSet, re-applied only
// while the TrainJob is suspended (BEHAVIOUR.md point 14 cites these by their TJ number).
#include <catch2/catch.hpp>

#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/trainjob.h"
#include "emulator/trainjob/build.h"
#include "emulator/trainjob/coscheduling.h"
#include "emulator/trainjob/sync.h"

namespace pjemu::trainjob {
namespace {

namespace atj = api::trainjob;
using Kind = Action::Kind;

const Time kT0 = FakeClock().Now();

// A TrainingRuntime whose node step names coscheduling's scheduler, with podGroupPolicy
// `policy` and, when `initializer`, a dataset-initializer step before it (one pod requesting
// cpu 1, memory 1Gi and, by a limit only, a GPU).
Json Runtime(const Json& policy, bool initializer = false) {
  Json runtime = atj::DefaultClusterTrainingRuntime();
  runtime["kind"] = "TrainingRuntime";
  runtime["metadata"] = {{"name", "torch-gang"}, {"namespace", "default"}};
  runtime["spec"]["podGroupPolicy"] = policy;
  Json& node = runtime["spec"]["template"]["spec"]["replicatedJobs"][0];
  node["template"]["spec"]["template"]["spec"]["schedulerName"] = api::kSchedulerPluginsSchedulerName;
  if (initializer) {
    Json init = Json::parse(R"({"name": "dataset-initializer", "template": {
      "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
      "spec": {"template": {"spec": {"containers": [{"name": "dataset-initializer", "image": "init",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 1}}}]}}}}})");
    auto& rjobs = runtime["spec"]["template"]["spec"]["replicatedJobs"];
    rjobs.insert(rjobs.begin(), init);
  }
  return runtime;
}

Json Coscheduling(int timeout) {
  return {{"coscheduling", {{"scheduleTimeoutSeconds", timeout}}}};
}

// Two nodes, each requesting 0.8 CPU, 2Gi and one GPU.
Json TrainJob() {
  Json tj = Json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "gang", "namespace": "default", "uid": "tj-uid",
                 "creationTimestamp": ")" + FormatTime(kT0) + R"("},
    "spec": {"runtimeRef": {"name": "torch-gang", "kind": "TrainingRuntime"},
      "trainer": {"numNodes": 2, "command": ["torchrun", "train.py"],
        "resourcesPerNode": {"requests": {"cpu": "0.8", "memory": "2Gi", "nvidia.com/gpu": 1}}}}})");
  atj::SetDefaults(tj);
  return tj;
}

const Json& PodTemplateLabels(const Json& rjob) {
  return rjob["template"]["spec"]["template"]["metadata"]["labels"];
}

TEST_CASE("TJ11 coscheduling: the PodGroup named after the TrainJob, owned by it, every pod counted and their requests summed", "[trainjob][gang]") {
  const Json runtime = Runtime(Coscheduling(30));
  const Json tj = TrainJob();
  const Json pg = DesiredPodGroup(tj, runtime, DesiredJobSet(tj, runtime));
  CHECK(pg["apiVersion"] == "scheduling.x-k8s.io/v1alpha1");
  CHECK(pg["kind"] == "PodGroup");
  CHECK(pg["metadata"]["name"] == "gang");
  CHECK(pg["metadata"]["namespace"] == "default");
  const Json& owner = pg["metadata"]["ownerReferences"][0];
  CHECK(owner["apiVersion"] == "trainer.kubeflow.org/v1alpha1");
  CHECK(owner["kind"] == "TrainJob");
  CHECK(owner["name"] == "gang");
  CHECK(owner["uid"] == "tj-uid");
  CHECK(owner["controller"] == true);
  CHECK(owner["blockOwnerDeletion"] == true);
  CHECK(pg["spec"]["minMember"] == 2);  // numNodes
  CHECK(pg["spec"]["minResources"] ==
        Json({{"cpu", "1600m"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "2"}}));
  CHECK(pg["spec"]["scheduleTimeoutSeconds"] == 30);

  SECTION("every replicatedJob counts; a resource with only a limit requests nothing") {
    const Json with_init = Runtime(Coscheduling(30), /*initializer=*/true);
    const Json all = DesiredPodGroup(tj, with_init, DesiredJobSet(tj, with_init));
    CHECK(all["spec"]["minMember"] == 3);
    CHECK(all["spec"]["minResources"] ==
          Json({{"cpu", "2600m"}, {"memory", "5Gi"}, {"nvidia.com/gpu", "2"}}));
  }
  SECTION("an init container raises its pod's requests to its own (kube-scheduler's max)") {
    Json init = Runtime(Coscheduling(30));
    init["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        ["initContainers"] = Json::parse(R"([{"name": "prep", "image": "prep",
          "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}])");
    CHECK(DesiredPodGroup(tj, init, DesiredJobSet(tj, init))["spec"]["minResources"] ==
          Json({{"cpu", "2"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "2"}}));
  }
  SECTION("the CRD's default timeout when the policy names none") {
    const Json bare = Runtime({{"coscheduling", Json::object()}});
    CHECK(DesiredPodGroup(tj, bare, DesiredJobSet(tj, bare))["spec"]["scheduleTimeoutSeconds"] == 60);
  }
}

TEST_CASE("TJ12 coscheduling: the pod-group label on every pod template, the template's schedulerName untouched", "[trainjob][gang]") {
  const Json runtime = Runtime(Coscheduling(30), /*initializer=*/true);
  const Json js = DesiredJobSet(TrainJob(), runtime);
  for (const Json& rjob : js["spec"]["replicatedJobs"]) {
    CAPTURE(rjob["name"]);
    CHECK(PodTemplateLabels(rjob)[api::kPodGroupLabel] == "gang");
  }
  const Json& rjobs = js["spec"]["replicatedJobs"];
  CHECK(rjobs[1]["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] ==
        "trainer");
  CHECK(rjobs[1]["template"]["spec"]["template"]["spec"]["schedulerName"] ==
        "scheduler-plugins-scheduler");
  CHECK_FALSE(rjobs[0]["template"]["spec"]["template"]["spec"].contains("schedulerName"));

  const Json plain = DesiredJobSet(TrainJob(), atj::DefaultClusterTrainingRuntime());
  CHECK(api::FieldAt(plain["spec"]["replicatedJobs"][0],
                     {"template", "spec", "template", "metadata", "labels"}).is_null());
}

TEST_CASE("TJ13 coscheduling: the PodGroup created before the JobSet, then left alone unless the TrainJob is suspended", "[trainjob][gang]") {
  Json runtime = Runtime(Coscheduling(30));
  Json tj = TrainJob();
  Sync first = ComputeSync(tj, &runtime, nullptr, nullptr, kT0);
  REQUIRE(first.actions.size() == 2);
  CHECK(first.actions[0].Is(Kind::kCreate, api::SchedulerPluginsPodGroups()));
  CHECK(first.actions[1].Is(Kind::kCreate, api::JobSets()));
  Json pg = first.actions[0].object;
  const Json js = first.actions[1].object;

  // Running: the runtime's timeout changed, the PodGroup not re-applied.
  runtime["spec"]["podGroupPolicy"] = Coscheduling(90);
  CHECK(ComputeSync(tj, &runtime, &js, &pg, kT0).actions.empty());
  // A deleted PodGroup comes back.
  Sync again = ComputeSync(tj, &runtime, &js, nullptr, kT0);
  REQUIRE(again.actions.size() == 1);
  CHECK(again.actions[0].Is(Kind::kCreate, api::SchedulerPluginsPodGroups()));

  // Suspended: re-applied over the stored one (its status kept).
  tj["spec"]["suspend"] = true;
  pg["status"] = {{"phase", "Pending"}};
  Sync suspended = ComputeSync(tj, &runtime, &js, &pg, kT0);
  REQUIRE(suspended.actions.size() == 2);
  CHECK(suspended.actions[0].Is(Kind::kUpdate, api::SchedulerPluginsPodGroups()));
  CHECK(suspended.actions[0].object["spec"]["scheduleTimeoutSeconds"] == 90);
  CHECK(suspended.actions[0].object["status"]["phase"] == "Pending");
  CHECK(suspended.actions[1].Is(Kind::kUpdate, api::JobSets()));  // the JobSet's suspend
  Json applied = suspended.actions[0].object;
  CHECK(ComputeSync(tj, &runtime, &js, &applied, kT0).actions.size() == 1);  // no change: no write

  // No runtime, or finished: no PodGroup.
  CHECK(ComputeSync(TrainJob(), nullptr, nullptr, nullptr, kT0).actions[0].kind == Kind::kEvent);
  Json done = TrainJob();
  done["status"]["conditions"] = {{{"type", "Complete"}, {"status", "True"}}};
  CHECK(ComputeSync(done, &runtime, &js, nullptr, kT0).actions.empty());
}

TEST_CASE("TJ14 podGroupPolicy admission: the CRD's default timeout, type errors naming the field", "[trainjob][gang]") {
  Json runtime = Runtime({{"coscheduling", Json::object()}});
  atj::SetRuntimeDefaults(runtime);
  CHECK(runtime["spec"]["podGroupPolicy"]["coscheduling"]["scheduleTimeoutSeconds"] == 60);
  CHECK(atj::ValidateRuntime(runtime, nullptr, nullptr).ok());
  Json no_policy = atj::DefaultClusterTrainingRuntime();
  atj::SetRuntimeDefaults(no_policy);
  CHECK(no_policy == atj::DefaultClusterTrainingRuntime());

  Json bad = Runtime({{"coscheduling", {{"scheduleTimeoutSeconds", "60s"}}}});
  Status s = atj::ValidateRuntime(bad, nullptr, nullptr);
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message() ==
        "TrainingRuntime.trainer.kubeflow.org \"torch-gang\" is invalid: "
        "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds: Invalid value: \"string\": "
        "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds in body must be of type "
        "integer: \"string\"");
  CHECK(s.details()["causes"][0]["field"] ==
        "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds");

  Json volcano = Runtime({{"volcano", {{"networkTopology", {{"mode", "strict"}}}}}});
  volcano["kind"] = "ClusterTrainingRuntime";
  CHECK_THAT(atj::ValidateRuntime(volcano, nullptr, nullptr).message(),
             Catch::Contains("ClusterTrainingRuntime.trainer.kubeflow.org \"torch-gang\" is invalid: "
                             "spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: "
                             "\"strict\": supported values: \"hard\", \"soft\""));
  Json not_object = Runtime({{"coscheduling", true}});
  CHECK_THAT(atj::ValidateRuntime(not_object, nullptr, nullptr).message(),
             Catch::Contains("spec.podGroupPolicy.coscheduling: Invalid value: \"boolean\": "
                             "spec.podGroupPolicy.coscheduling in body must be of type object"));
}

}  // namespace
}  // namespace pjemu::trainjob
