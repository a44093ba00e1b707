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
  auto created = c.client->Create(api::Pods(), "default", PodObject("p1", 1));
  REQUIRE(created.ok());
  api::WatchOptions from_create;
  from_create.resource_version = (*created)["metadata"]["resourceVersion"];
  auto watch = c.client->Watch(api::Pods(), "default", from_create);
  REQUIRE(watch.ok());
  c.loop.RunFor(1s);
  Json p = c.Pod("p1");
  CHECK(p["spec"]["nodeName"] == "node-a");
  CHECK(p["status"]["conditions"][0]["type"] == "PodScheduled");
  CHECK(p["status"]["conditions"][0]["status"] == "True");
  CHECK(c.Events("Scheduled") == 1);
  // One write, as pods/binding is: a watcher never sees the condition without the node. The
  // binding is the storage's write, so no field manager owns what it set.
  std::vector<Json> seen;
  while (auto e = (*watch)->TryNext()) seen.push_back(e->object());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0]["spec"]["nodeName"] == "node-a");
  CHECK(seen[0]["status"]["conditions"][0]["status"] == "True");
  CHECK(p["metadata"]["managedFields"] == (*created)["metadata"]["managedFields"]);
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
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
  // Later passes (periodic retry, other pod events) do not repeat the event.
  c.loop.RunFor(30s);
  CHECK(c.Events("FailedScheduling") == 1);
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-b", "1")).ok());
  c.loop.RunFor(1s);
  p = c.Pod("second");
  CHECK(p["spec"]["nodeName"] == "node-b");
  CHECK(p["status"]["conditions"][0]["status"] == "True");
  CHECK_FALSE(p["status"]["conditions"][0].contains("reason"));  // replaced, as UpdatePodCondition
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

TEST_CASE("required anti-affinity keeps apart pods bound in earlier passes and in the same pass",
          "[scheduler]") {
  // A pass lists the pods bound to each node only while some cached pod has placement terms:
  // the first pod has none, the later ones do, and the one whose term matches an existing pod
  // waits until that pod is gone.
  Cluster c;
  for (const char* n : {"node-a", "node-b"}) {
    Json node = NodeObject(n, "0");
    node["metadata"]["labels"] = {{"kubernetes.io/hostname", n}};
    REQUIRE(c.client->Create(api::Nodes(), "", node).ok());
  }
  REQUIRE(c.scheduler.Start().ok());
  auto apart = [](const std::string& name) {
    Json pod = PodObject(name, 0);
    pod["metadata"]["labels"] = {{"app", "apart"}};
    pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {{"labelSelector", {{"matchLabels", {{"app", "apart"}}}}},
         {"topologyKey", "kubernetes.io/hostname"}}};
    return pod;
  };
  REQUIRE(c.client->Create(api::Pods(), "default", PodObject("plain", 0)).ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("plain")["spec"].contains("nodeName"));
  REQUIRE(c.client->Create(api::Pods(), "default", apart("one")).ok());
  REQUIRE(c.client->Create(api::Pods(), "default", apart("two")).ok());
  c.loop.RunFor(1s);
  const Json one = c.Pod("one"), two = c.Pod("two");
  REQUIRE(one["spec"].contains("nodeName"));
  REQUIRE(two["spec"].contains("nodeName"));
  CHECK(one["spec"]["nodeName"] != two["spec"]["nodeName"]);
  REQUIRE(c.client->Create(api::Pods(), "default", apart("three")).ok());
  c.loop.RunFor(1s);
  Json three = c.Pod("three");
  CHECK_FALSE(three["spec"].contains("nodeName"));
  CHECK(three["status"]["conditions"][0]["message"] ==
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 "
        "nodes are available: 2 No preemption victims found for incoming pod.");
  api::DeleteOptions now;
  now.grace_period_seconds = 0;
  REQUIRE(c.client->Delete(api::Pods(), "default", "one", now).ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("three")["spec"]["nodeName"] == one["spec"]["nodeName"]);
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

Json ClaimPod(const std::string& name, const std::string& claim) {
  Json pod = PodObject(name, 0);
  pod["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
  return pod;
}

Json Claim(const std::string& name, const std::string& cls) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"storageClassName", cls},
            {"accessModes", {"ReadWriteOnce"}},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

Json Class(const std::string& name, const std::string& mode) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},
          {"provisioner", "rancher.io/local-path"},
          {"volumeBindingMode", mode}};
}

// What the volume controller does once a claim is provisioned: spec.volumeName, then Bound.
void BindClaim(Cluster& c, const std::string& claim, const std::string& pv) {
  Json volume = {{"apiVersion", "v1"},
                 {"kind", "PersistentVolume"},
                 {"metadata", {{"name", pv}}},
                 {"spec",
                  {{"capacity", {{"storage", "1Gi"}}},
                   {"accessModes", {"ReadWriteOnce"}},
                   {"hostPath", {{"path", "/tmp/" + pv}}},
                   {"nodeAffinity",
                    {{"required",
                      {{"nodeSelectorTerms",
                        {{{"matchExpressions",
                           {{{"key", "kubernetes.io/hostname"},
                             {"operator", "In"},
                             {"values", {"node-a"}}}}}}}}}}}}}}};
  REQUIRE(c.client->Create(api::PersistentVolumes(), "", volume).ok());
  Json spec = {{"spec", {{"volumeName", pv}}}};
  REQUIRE(
      c.client->Patch(api::PersistentVolumeClaims(), "default", claim, api::PatchType::kMerge, spec)
          .ok());
  Json bound = {{"status", {{"phase", "Bound"}}}};
  REQUIRE(c.client
              ->Patch(api::PersistentVolumeClaims(), "default", claim, api::PatchType::kMerge,
                      bound, api::Subresource::kStatus)
              .ok());
}

TEST_CASE("a pod whose claim is missing waits Unschedulable until it appears", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "0")).ok());
  REQUIRE(c.client->Create(api::StorageClasses(), "", Class("now", "Immediate")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", ClaimPod("p", "data")).ok());
  c.loop.RunFor(1s);
  Json p = c.Pod("p");
  CHECK_FALSE(p["spec"].contains("nodeName"));
  CHECK(p["status"]["conditions"][0]["reason"] == "Unschedulable");
  CHECK(p["status"]["conditions"][0]["message"] ==
        "0/1 nodes are available: persistentvolumeclaim \"data\" not found.");
  REQUIRE(c.client->Create(api::PersistentVolumeClaims(), "default", Claim("data", "now")).ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("p")["status"]["conditions"][0]["message"] ==
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  BindClaim(c, "data", "pv1");
  c.loop.RunFor(1s);
  CHECK(c.Pod("p")["spec"]["nodeName"] == "node-a");
  CHECK(c.Events("FailedScheduling") == 2);
}

TEST_CASE("a WaitForFirstConsumer claim gets the node, and the pod waits until it is bound",
          "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-a", "0")).ok());
  REQUIRE(
      c.client->Create(api::StorageClasses(), "", Class("standard", "WaitForFirstConsumer")).ok());
  REQUIRE(
      c.client->Create(api::PersistentVolumeClaims(), "default", Claim("data", "standard")).ok());
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", ClaimPod("p", "data")).ok());
  c.loop.RunFor(30s);
  CHECK_FALSE(c.Pod("p")["spec"].contains("nodeName"));
  CHECK(c.Events("FailedScheduling") == 0);
  Json claim = *c.client->Get(api::PersistentVolumeClaims(), "default", "data");
  CHECK(claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-a");
  BindClaim(c, "data", "pv1");
  c.loop.RunFor(1s);
  CHECK(c.Pod("p")["spec"]["nodeName"] == "node-a");
}

TEST_CASE("a claim bound to a volume on another node conflicts", "[scheduler]") {
  Cluster c;
  REQUIRE(c.client->Create(api::Nodes(), "", NodeObject("node-b", "0")).ok());
  REQUIRE(c.client->Create(api::PersistentVolumeClaims(), "default", Claim("data", "")).ok());
  BindClaim(c, "data", "pv1");  // its volume is on node-a
  REQUIRE(c.scheduler.Start().ok());
  REQUIRE(c.client->Create(api::Pods(), "default", ClaimPod("p", "data")).ok());
  c.loop.RunFor(1s);
  CHECK(c.Pod("p")["status"]["conditions"][0]["message"] ==
        "0/1 nodes are available: 1 node(s) had volume node affinity conflict. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
}

}  // namespace
}  // namespace pjemu::scheduler
