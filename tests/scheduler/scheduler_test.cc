// Given a Store with nodes and pending pods (virtual time, no kubelet), the scheduler should
// bind what fits, mark the rest Unschedulable once, and retry when the cluster changes.
#include "emulator/scheduler/scheduler.h"

#include <catch2/catch.hpp>

#include "emulator/client/local_client.h"
#include "emulator/store/store.h"

namespace pjemu::scheduler {
namespace {

Json NodeObject(const std::string& name, const std::string& gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable",
             {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}, {"nvidia.com/gpu", gpus}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

Json PodObject(const std::string& name, int gpus) {
  Json c = {{"name", "c"}, {"image", "busybox"}};
  if (gpus) c["resources"] = {{"limits", {{"nvidia.com/gpu", gpus}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {c}}}}};
}

struct Cluster {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  Scheduler scheduler{*client, loop};

  Json Pod(const std::string& name) { return *client->Get(api::Pods(), "default", name); }
  int Events(const std::string& reason) {
    auto list = client->List(api::Events(), "default");
    REQUIRE(list.ok());
    int n = 0;
    for (const Json& e : (*list)["items"]) n += e["reason"] == reason;
    return n;
  }
};

TEST_CASE("pods are bound with PodScheduled=True and a Scheduled event", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "1")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("p1", 1)).ok());
  c.loop.RunFor(1s);
  Json p = c.Pod("p1");
  CHECK(p["spec"]["nodeName"] == "node-a");
  CHECK(p["status"]["conditions"][0]["type"] == "PodScheduled");
  CHECK(p["status"]["conditions"][0]["status"] == "True");
  CHECK(c.Events("Scheduled") == 1);
}

TEST_CASE("an unschedulable pod is retried when a node that fits appears", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "1")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("first", 1)).ok());
  c.loop.RunFor(1s);
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("second", 1)).ok());
  c.loop.RunFor(1s);
  Json p = c.Pod("second");
  CHECK_FALSE(p["spec"].contains("nodeName"));
  CHECK(p["status"]["conditions"][0]["reason"] == "Unschedulable");
  CHECK(p["status"]["conditions"][0]["message"] ==
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
  // Later passes (periodic retry, other pod events) do not repeat the event.
  c.loop.RunFor(30s);
  CHECK(c.Events("FailedScheduling") == 1);
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-b", "1")).ok());
  c.loop.RunFor(1s);
  p = c.Pod("second");
  CHECK(p["spec"]["nodeName"] == "node-b");
  CHECK(p["status"]["conditions"][0]["status"] == "True");
}

TEST_CASE("a finished pod frees its resources for pending ones", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "1")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("first", 1)).ok());
  c.loop.RunFor(1s);
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("second", 1)).ok());
  c.loop.RunFor(1s);
  CHECK_FALSE(c.Pod("second")["spec"].contains("nodeName"));
  Json done = {{"status", {{"phase", "Succeeded"}}}};
  REQUIRE(c.client
              ->Patch(api::Pods(), "default", "first", api::PatchType::kMerge, done,
                      api::Subresource::kStatus)
              .ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("second")["spec"]["nodeName"] == "node-a");
}

TEST_CASE("room made by a deleted pod goes to the oldest pending pod", "[scheduler]") {
  // Unfit pods wait until room is made instead of being tried on every pod event:
  // a newer pod arriving meanwhile must not take the room ahead of them.
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "1")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("first", 1)).ok());
  c.loop.RunFor(1s);
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("second", 1)).ok());
  c.loop.RunFor(1s);
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("third", 1)).ok());
  c.loop.RunFor(1s);
  CHECK(c.Events("FailedScheduling") == 2);
  api::DeleteOptions now;
  now.grace_period_seconds = 0;  // gone at once (no kubelet here to finish a graceful delete)
  REQUIRE(c.client->Delete(api::Pods(), "default", "first", now).ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("second")["spec"]["nodeName"] == "node-a");
  CHECK_FALSE(c.Pod("third")["spec"].contains("nodeName"));
  CHECK(c.Events("FailedScheduling") == 2);
}

TEST_CASE("pods for another scheduler are left alone", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "0")).ok());
  REQUIRE(c.scheduler.Start().ok());
  Json pod = PodObject("volcano", 0);
  pod["spec"]["schedulerName"] = "volcano";
  REQUIRE(c.client->Create(api::Pods(), "default", pod).ok());
  c.loop.RunFor(1s);
  CHECK_FALSE(c.Pod("volcano")["spec"].contains("nodeName"));
}

}  // namespace
}  // namespace pjemu::scheduler
