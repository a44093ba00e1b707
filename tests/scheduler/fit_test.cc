// Given nodes and a pod's requests, the scheduler should pick a node or explain, in
// kube-scheduler's words, why none fits.
#include "emulator/scheduler/fit.h"

#include <catch2/catch.hpp>

namespace pjemu::scheduler {
namespace {

NodeView Node(const std::string& name, std::int64_t cpu_m, std::int64_t mem, std::int64_t gpus,
              bool ready = true) {
  NodeView n;
  n.name = name;
  n.allocatable = {{"cpu", cpu_m}, {"memory", mem}, {"nvidia.com/gpu", gpus}, {"pods", 110}};
  n.ready = ready;
  return n;
}

Json Pod() { return {{"spec", Json::object()}}; }

TEST_CASE("the GPU message matches kube-scheduler's", "[scheduler]") {
  std::string message;
  auto chosen =
      ChooseNode(Pod(), {{"nvidia.com/gpu", 1}}, {Node("n1", 8000, 1 << 30, 0)}, &message);
  CHECK_FALSE(chosen);
  CHECK(message == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
}

TEST_CASE("reasons are counted per node and sorted", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("a", 1000, 1 << 30, 0), Node("b", 500, 1 << 20, 0),
                                 Node("c", 8000, 1 << 30, 0, false)};
  std::string message;
  CHECK_FALSE(ChooseNode(Pod(), {{"cpu", 2000}, {"memory", 1 << 29}}, nodes, &message));
  CHECK(message ==
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
        "{node.kubernetes.io/not-ready: }, 2 Insufficient cpu. preemption: 0/3 nodes are "
        "available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found "
        "for incoming pod.");
}

TEST_CASE("used resources and the pod count limit fit", "[scheduler]") {
  NodeView n = Node("n1", 4000, 1 << 30, 2);
  n.used = {{"cpu", 3500}, {"nvidia.com/gpu", 2}};
  CHECK(UnfitReasons(Pod(), {{"cpu", 500}}, n).empty());
  CHECK(UnfitReasons(Pod(), {{"cpu", 501}}, n) == std::vector<std::string>{"Insufficient cpu"});
  CHECK(UnfitReasons(Pod(), {{"nvidia.com/gpu", 1}}, n) ==
        std::vector<std::string>{"Insufficient nvidia.com/gpu"});
  n.used["pods"] = 110;
  CHECK(UnfitReasons(Pod(), {}, n) == std::vector<std::string>{"Too many pods"});
}

TEST_CASE("nodeSelector must match the node's labels", "[scheduler]") {
  NodeView n = Node("n1", 4000, 1 << 30, 0);
  n.labels = {{"zone", "a"}};
  Json pod = {{"spec", {{"nodeSelector", {{"zone", "b"}}}}}};
  CHECK(UnfitReasons(pod, {}, n) ==
        std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"});
  pod["spec"]["nodeSelector"]["zone"] = "a";
  CHECK(UnfitReasons(pod, {}, n).empty());
}

TEST_CASE("the least allocated node wins, ties by name", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("b", 4000, 1 << 30, 0), Node("a", 4000, 1 << 30, 0)};
  std::string message;
  CHECK(ChooseNode(Pod(), {{"cpu", 1000}}, nodes, &message) == std::optional<std::size_t>(1));
  nodes[1].used = {{"cpu", 2000}};
  CHECK(ChooseNode(Pod(), {{"cpu", 1000}}, nodes, &message) == std::optional<std::size_t>(0));
  std::string none;
  CHECK_FALSE(ChooseNode(Pod(), {}, {}, &none));
  CHECK(none == "no nodes available to schedule pods");
}

TEST_CASE("a node from a Node object reads allocatable and readiness", "[scheduler]") {
  Json node = {{"metadata", {{"name", "n1"}, {"labels", {{"k", "v"}}}}},
               {"status",
                {{"allocatable", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}}},
                 {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  NodeView v = ViewOfNode(node);
  CHECK(v.name == "n1");
  CHECK(v.ready);
  CHECK(v.allocatable["cpu"] == 2000);
  CHECK(v.allocatable["memory"] == 1073741824);
  CHECK(v.allocatable["nvidia.com/gpu"] == 1);
  CHECK(v.labels["k"] == "v");
}

Json PodWithClaims(std::initializer_list<const char*> claims) {
  Json volumes = Json::array();
  for (const char* c : claims) {
    volumes.push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
  }
  volumes.push_back({{"name", "scratch"}, {"emptyDir", Json::object()}});
  return {{"spec", {{"volumes", volumes}}}};
}

Json ClaimObject(const std::string& volume_name, const std::string& cls) {
  Json c = {{"metadata", {{"name", "c"}}}, {"spec", Json::object()}};
  if (!volume_name.empty()) c["spec"]["volumeName"] = volume_name;
  if (!cls.empty()) c["spec"]["storageClassName"] = cls;
  return c;
}

Json VolumeOn(const std::string& node) {
  return {{"spec",
           {{"nodeAffinity",
             {{"required",
               {{"nodeSelectorTerms",
                 {{{"matchExpressions",
                    {{{"key", "kubernetes.io/hostname"},
                      {"operator", "In"},
                      {"values", {node}}}}}}}}}}}}}}};
}

const Json kWffc = {{"volumeBindingMode", "WaitForFirstConsumer"}};
const Json kImmediate = {{"volumeBindingMode", "Immediate"}};

TEST_CASE("a pod's claim names, once each, in order", "[scheduler]") {
  Json pod = PodWithClaims({"b", "a", "b"});
  CHECK(PodClaimNames(pod) == std::vector<std::string>{"b", "a"});
  CHECK(PodClaimNames(Pod()).empty());
}

TEST_CASE("a missing claim keeps the pod off every node", "[scheduler]") {
  std::string message;
  std::vector<ClaimView> claims = {ViewOfClaim("data", nullptr, nullptr, nullptr)};
  CHECK_FALSE(ChooseNode(Pod(), {}, {Node("n1", 1000, 1 << 30, 0)}, &message, claims));
  CHECK(message == "0/1 nodes are available: persistentvolumeclaim \"data\" not found.");
}

TEST_CASE("an unbound Immediate claim keeps the pod off every node", "[scheduler]") {
  std::string message;
  std::vector<ClaimView> claims = {
      ViewOfClaim("data", ClaimObject("", "now"), kImmediate, nullptr)};
  std::vector<NodeView> nodes = {Node("n1", 1000, 1 << 30, 0), Node("n2", 1000, 1 << 30, 0)};
  CHECK_FALSE(ChooseNode(Pod(), {}, nodes, &message, claims));
  CHECK(message == "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  // No class at all: Immediate as well.
  claims = {ViewOfClaim("data", ClaimObject("", ""), nullptr, nullptr)};
  CHECK_FALSE(ChooseNode(Pod(), {}, nodes, &message, claims));
  // A class that does not exist is the plugin's error, not a fit.
  claims = {ViewOfClaim("data", ClaimObject("", "gold"), nullptr, nullptr)};
  CHECK_FALSE(ChooseNode(Pod(), {}, nodes, &message, claims));
  CHECK(message ==
        "running PreFilter plugin \"VolumeBinding\": storageclass.storage.k8s.io \"gold\" not "
        "found");
}

TEST_CASE("an unbound WaitForFirstConsumer claim lets the pod choose its node", "[scheduler]") {
  std::string message;
  ClaimView c = ViewOfClaim("data", ClaimObject("", "standard"), kWffc, nullptr);
  CHECK(c.wait_for_first_consumer);
  CHECK_FALSE(c.bound);
  CHECK(ChooseNode(Pod(), {}, {Node("n1", 1000, 1 << 30, 0)}, &message, {c}) ==
        std::optional<std::size_t>(0));
  c.selected_node = "n2";  // asked of another node already
  CHECK(UnfitReasons(Pod(), {}, Node("n1", 1000, 1 << 30, 0), {c}) ==
        std::vector<std::string>{"node(s) didn't find available persistent volumes to bind"});
}

TEST_CASE("a bound volume's node affinity excludes other nodes", "[scheduler]") {
  std::string message;
  ClaimView c = ViewOfClaim("data", ClaimObject("pv1", "standard"), nullptr, VolumeOn("n2"));
  CHECK(c.bound);
  CHECK(c.volume_nodes == std::vector<std::string>{"n2"});
  CHECK_FALSE(ChooseNode(Pod(), {}, {Node("n1", 1000, 1 << 30, 0)}, &message, {c}));
  CHECK(message == "0/1 nodes are available: 1 node(s) had volume node affinity conflict. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  std::vector<NodeView> nodes = {Node("n1", 8000, 1 << 30, 0), Node("n2", 1000, 1 << 30, 0)};
  CHECK(ChooseNode(Pod(), {}, nodes, &message, {c}) == std::optional<std::size_t>(1));
  // A volume without node affinity fits anywhere.
  c = ViewOfClaim("data", ClaimObject("pv1", ""), nullptr, Json::object());
  CHECK(UnfitReasons(Pod(), {}, nodes[0], {c}).empty());
}

}  // namespace
}  // namespace pjemu::scheduler
