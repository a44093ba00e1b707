// Given --gang-scheduler-name, the PyTorchJob controller should make the job's PodGroup as the
// Training Operator v1.9 does and decorate each pod for its gang; through the descriptor's
// prepare and decorate hooks when run by the generic KindReconciler.
#include "emulator/pytorchjob/pod_group.h"

#include <catch2/catch.hpp>

#include "emulator/api/podgroup.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/pytorchjob/pytorchjob.h"
#include "emulator/store/store.h"

namespace pjemu::pytorchjob {

using controller::EventRecorder;
namespace {

Json Job(const Json& policy = Json::object()) {
  Json c = {{"name", "pytorch"},
            {"image", "busybox"},
            {"resources", {{"limits", {{"cpu", "0.8"}, {"memory", "2Gi"}}}}}};
  Json spec = {{"pytorchReplicaSpecs",
                {{"Master", {{"replicas", 1}, {"template", {{"spec", {{"containers", {c}}}}}}}},
                 {"Worker", {{"replicas", 1}, {"template", {{"spec", {{"containers", {c}}}}}}}}}}};
  if (!policy.empty()) spec["runPolicy"] = {{"schedulingPolicy", policy}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", "gang"}, {"namespace", "default"}, {"uid", "u1"}}},
          {"spec", spec}};
}

TEST_CASE("scheduler-plugins PodGroup: minMember all replicas, minResources from limits",
          "[controller][gang]") {
  GangOptions gang{"scheduler-plugins"};
  Json pg = DesiredPodGroup(Job(), gang);
  CHECK(pg["apiVersion"] == "scheduling.x-k8s.io/v1alpha1");
  CHECK(pg["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob");
  CHECK(pg["spec"]["minMember"] == 2);
  CHECK(pg["spec"]["minResources"]["cpu"] == "1600m");
  CHECK(pg["spec"]["minResources"]["memory"] == "4Gi");
  CHECK_FALSE(pg["spec"].contains("queue"));
  pg = DesiredPodGroup(Job({{"minAvailable", 10}, {"scheduleTimeoutSeconds", 30}}), gang);
  CHECK(pg["spec"]["minMember"] == 10);
  CHECK(pg["spec"]["scheduleTimeoutSeconds"] == 30);
}

TEST_CASE("Volcano PodGroup: queue default, priority class, no timeout", "[controller][gang]") {
  GangOptions gang{"Volcano"};
  Json pg = DesiredPodGroup(Job({{"priorityClass", "high"}, {"scheduleTimeoutSeconds", 30}}), gang);
  CHECK(pg["apiVersion"] == "scheduling.volcano.sh/v1beta1");
  CHECK(pg["spec"]["queue"] == "default");
  CHECK(pg["spec"]["priorityClassName"] == "high");
  CHECK_FALSE(pg["spec"].contains("scheduleTimeoutSeconds"));
}

TEST_CASE("pods get the gang's schedulerName and group label or annotations",
          "[controller][gang]") {
  FakeClock clock;
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  EventRecorder recorder(*client, clock, "pytorchjob-controller");
  Json pod = {{"metadata", {{"name", "gang-master-0"},
                            {"labels", {{"training.kubeflow.org/replica-type", "master"}}}}},
              {"spec", {{"containers", Json::array()}}}};
  Json sp = WithGang(pod, Job(), {"scheduler-plugins"}, recorder);
  CHECK(sp["spec"]["schedulerName"] == "scheduler-plugins");
  CHECK(sp["metadata"]["labels"][api::kPodGroupLabel] == "gang");
  Json vc = WithGang(pod, Job(), {"volcano"}, recorder);
  CHECK(vc["spec"]["schedulerName"] == "volcano");
  CHECK(vc["metadata"]["annotations"][api::kVolcanoGroupAnnotation] == "gang");
  CHECK(vc["metadata"]["annotations"][api::kVolcanoTaskSpecAnnotation] == "master");
  CHECK(WithGang(pod, Job(), {}, recorder) == pod);  // off: untouched
}

TEST_CASE("the PodGroup is created before pods and deleted when the job ends",
          "[controller][gang]") {
  FakeClock clock;
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  EventRecorder recorder(*client, clock, "pytorchjob-controller");
  GangOptions gang{"scheduler-plugins"};
  Json job = *client->Create(api::PyTorchJobs(), "default", Job());
  REQUIRE(SyncPodGroup(*client, recorder, job, gang).ok());
  CHECK(client->Get(api::SchedulerPluginsPodGroups(), "default", "gang").ok());
  job["status"] = {{"conditions", {{{"type", "Succeeded"}, {"status", "True"}}}}};
  REQUIRE(SyncPodGroup(*client, recorder, job, gang).ok());
  CHECK_FALSE(client->Get(api::SchedulerPluginsPodGroups(), "default", "gang").ok());
  auto events = client->List(api::Events(), "default");
  REQUIRE(events.ok());
  std::string reasons;
  for (const Json& e : (*events)["items"]) reasons += e["reason"].get<std::string>() + " ";
  CHECK(reasons.find("JobTerminated SuccessfulDeletePodGroup") != std::string::npos);
}

TEST_CASE("the descriptor's hooks: --gang-scheduler-name reaches the PodGroup and the pods",
          "[controller][gang]") {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  controller::KindOptions options;
  options.gang_scheduler_name = "scheduler-plugins";
  controller::Controller c(*client, loop,
                           controller::SpecOf(Descriptor(), *client, clock, options));
  REQUIRE(c.Start().ok());
  loop.RunUntilIdle();
  Json job = Job();
  job["metadata"].erase("uid");
  REQUIRE(client->Create(api::PyTorchJobs(), "default", job).ok());
  loop.RunUntilIdle();
  CHECK(client->Get(api::SchedulerPluginsPodGroups(), "default", "gang").ok());
  auto pods = client->List(api::Pods(), "default");
  REQUIRE(pods.ok());
  REQUIRE((*pods)["items"].size() == 2);
  for (const Json& pod : (*pods)["items"]) {
    CHECK(pod["spec"]["schedulerName"] == "scheduler-plugins");
    CHECK(pod["metadata"]["labels"][api::kPodGroupLabel] == "gang");
  }
  // The master succeeds, the job with it; the next pass deletes the PodGroup.
  Json patch = {{"status", {{"phase", "Succeeded"}}}};
  REQUIRE(client
              ->Patch(api::Pods(), "default", "gang-master-0", api::PatchType::kMerge, patch,
                      api::Subresource::kStatus)
              .ok());
  loop.RunUntilIdle();
  CHECK_FALSE(client->Get(api::SchedulerPluginsPodGroups(), "default", "gang").ok());
  c.Stop();
}

TEST_CASE("without --gang-scheduler-name the descriptor writes no PodGroup", "[controller][gang]") {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  controller::Controller c(*client, loop, controller::SpecOf(Descriptor(), *client, clock));
  REQUIRE(c.Start().ok());
  loop.RunUntilIdle();
  Json job = Job();
  job["metadata"].erase("uid");
  REQUIRE(client->Create(api::PyTorchJobs(), "default", job).ok());
  loop.RunUntilIdle();
  auto groups = client->List(api::SchedulerPluginsPodGroups(), "default");
  REQUIRE(groups.ok());
  CHECK((*groups)["items"].empty());
  auto pods = client->List(api::Pods(), "default");
  REQUIRE(pods.ok());
  REQUIRE((*pods)["items"].size() == 2);
  for (const Json& pod : (*pods)["items"]) {
    CHECK_FALSE(pod["metadata"]["labels"].contains(api::kPodGroupLabel));
  }
  c.Stop();
}

}  // namespace
}  // namespace pjemu::pytorchjob
