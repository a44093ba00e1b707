// Given two one-GPU nodes and gangs of GPU pods (virtual time, no kubelet), the scheduler
// should bind each PodGroup all or nothing, say why a gang waits, and keep its status.
#include <catch2/catch.hpp>

#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/client/local_client.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::scheduler {
namespace {

Json GpuNode(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "1"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

Json GangPod(const std::string& name, const std::string& group) {
  Json c = {{"name", "c"},
            {"image", "busybox"},
            {"resources", {{"limits", {{"nvidia.com/gpu", 1}}}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{api::kPodGroupLabel, group}}}}},
          {"spec", {{"schedulerName", "scheduler-plugins-scheduler"}, {"containers", {c}}}}};
}

Json Group(const std::string& name, int min) {
  return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}}},
          {"spec", {{"minMember", min}}}};
}

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  Scheduler scheduler{*client, loop,
                      SchedulerOptions{.gang_scheduler_names = {"scheduler-plugins-scheduler"}}};
  Fixture() {
    REQUIRE(client->Create(api::Nodes(), "", GpuNode("n1")).ok());
    REQUIRE(client->Create(api::Nodes(), "", GpuNode("n2")).ok());
    REQUIRE(scheduler.Start().ok());
  }
  Json Pod(const std::string& name) { return *client->Get(api::Pods(), "default", name); }
  std::string NodeOf(const std::string& name) { return api::Str(Pod(name)["spec"], "nodeName"); }
  Json GroupNow(const std::string& name) {
    return *client->Get(api::SchedulerPluginsPodGroups(), "default", name);
  }
};

TEST_CASE("two gangs that each need both GPUs run one after the other", "[scheduler][gang]") {
  Fixture f;
  REQUIRE(f.client->Create(api::SchedulerPluginsPodGroups(), "default", Group("a", 2)).ok());
  REQUIRE(f.client->Create(api::SchedulerPluginsPodGroups(), "default", Group("b", 2)).ok());
  // Created interleaved, as two jobs' controllers would: a's master, b's master, ...
  for (const char* name : {"a-0", "b-0", "a-1", "b-1"}) {
    REQUIRE(f.client->Create(api::Pods(), "default", GangPod(name, std::string(1, name[0]))).ok());
    f.clock.Advance(1s);
  }
  f.loop.RunFor(1s);
  CHECK(!f.NodeOf("a-0").empty());
  CHECK(!f.NodeOf("a-1").empty());
  CHECK(f.NodeOf("a-0") != f.NodeOf("a-1"));
  CHECK(f.NodeOf("b-0").empty());  // no half gang holds a GPU
  CHECK(f.NodeOf("b-1").empty());
  CHECK(f.Pod("b-0")["status"]["conditions"][0]["reason"] == "Unschedulable");
  CHECK(f.GroupNow("a")["status"]["phase"] == "Scheduling");
  CHECK(f.GroupNow("b")["status"]["phase"] == "Scheduling");
  for (const char* name : {"a-0", "a-1"}) {
    REQUIRE(f.client
                ->Patch(api::Pods(), "default", name, api::PatchType::kMerge,
                        {{"status", {{"phase", "Succeeded"}}}}, api::Subresource::kStatus)
                .ok());
  }
  f.loop.RunFor(1s);
  CHECK(!f.NodeOf("b-0").empty());
  CHECK(!f.NodeOf("b-1").empty());
  CHECK(f.GroupNow("a")["status"]["phase"] == "Finished");
  CHECK(f.GroupNow("a")["status"]["succeeded"] == 2);
}

TEST_CASE("a gang short of siblings stays Pending with coscheduling's reason", "[scheduler][gang]") {
  Fixture f;
  REQUIRE(f.client->Create(api::SchedulerPluginsPodGroups(), "default", Group("big", 10)).ok());
  REQUIRE(f.client->Create(api::Pods(), "default", GangPod("big-0", "big")).ok());
  REQUIRE(f.client->Create(api::Pods(), "default", GangPod("big-1", "big")).ok());
  f.loop.RunFor(1s);
  CHECK(f.NodeOf("big-0").empty());
  CHECK(f.Pod("big-0")["status"]["conditions"][0]["message"] ==
        "0/2 nodes are available: pre-filter pod big-0 cannot find enough sibling pods, current "
        "pods number: 2, minMember of group: 10. preemption: 0/2 nodes are available: 2 "
        "Preemption is not helpful for scheduling.");
  CHECK(f.GroupNow("big")["status"]["phase"] == "Pending");
}

TEST_CASE("a gang that fits only in part waits, then its timeout rejects it", "[scheduler][gang]") {
  Fixture f;
  Json group = Group("g", 3);
  group["spec"]["scheduleTimeoutSeconds"] = 20;
  REQUIRE(f.client->Create(api::SchedulerPluginsPodGroups(), "default", group).ok());
  for (const char* name : {"g-0", "g-1", "g-2"})
    REQUIRE(f.client->Create(api::Pods(), "default", GangPod(name, "g")).ok());
  f.loop.RunFor(1s);
  CHECK(f.NodeOf("g-0").empty());
  CHECK(f.NodeOf("g-1").empty());
  f.loop.RunFor(40s);
  CHECK(f.Pod("g-0")["status"]["conditions"][0]["message"] ==
        "rejected due to timeout after waiting 20s at plugin Coscheduling");
  CHECK(api::Str(f.Pod("g-2")["status"]["conditions"][0], "message")
            .rfind("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", 0) == 0);
}

TEST_CASE("a Volcano gang short of room: Inqueue, NotEnoughResources, an event",
          "[scheduler][gang]") {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  Scheduler scheduler{*client, loop, SchedulerOptions{.gang_scheduler_names = {"volcano"}}};
  REQUIRE(client->Create(api::Nodes(), "", GpuNode("n1")).ok());
  REQUIRE(scheduler.Start().ok());
  Json group = Group("v", 2);
  group["apiVersion"] = "scheduling.volcano.sh/v1beta1";
  REQUIRE(client->Create(api::VolcanoPodGroups(), "default", group).ok());
  for (const char* name : {"v-0", "v-1"}) {
    Json pod = GangPod(name, "v");
    pod["metadata"].erase("labels");
    pod["metadata"]["annotations"] = {{api::kVolcanoGroupAnnotation, "v"}};
    pod["spec"]["schedulerName"] = "volcano";
    REQUIRE(client->Create(api::Pods(), "default", pod).ok());
  }
  loop.RunFor(1s);
  CHECK(api::Str((*client->Get(api::Pods(), "default", "v-0"))["spec"], "nodeName").empty());
  Json pg = *client->Get(api::VolcanoPodGroups(), "default", "v");
  CHECK(pg["status"]["phase"] == "Inqueue");
  CHECK(pg["status"]["conditions"][0]["reason"] == "NotEnoughResources");
  CHECK(pg["status"]["conditions"][0]["message"] ==
        "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable");
  REQUIRE(client->Create(api::Nodes(), "", GpuNode("n2")).ok());
  loop.RunFor(1s);
  CHECK(!api::Str((*client->Get(api::Pods(), "default", "v-0"))["spec"], "nodeName").empty());
  CHECK(!api::Str((*client->Get(api::Pods(), "default", "v-1"))["spec"], "nodeName").empty());
}

}  // namespace
}  // namespace pjemu::scheduler
