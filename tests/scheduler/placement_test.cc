// Given nodes with labels, taints and pods, the scheduler should place a pod where
// kube-scheduler would (taints, node affinity, anti-affinity, topology spread) and say why not
// in its words.
#include <catch2/catch.hpp>

#include "emulator/api/taints.h"
#include "emulator/scheduler/fit.h"

namespace pjemu::scheduler {
namespace {

NodeView Node(const std::string& name, std::int64_t gpus = 0) {
  NodeView n;
  n.name = name;
  n.allocatable = {{"cpu", 8000}, {"memory", 1LL << 34}, {"nvidia.com/gpu", gpus}, {"pods", 110}};
  n.ready = true;
  n.labels = {{"kubernetes.io/hostname", name}};
  return n;
}

Json PodWith(const Json& spec, const Json& labels = Json::object()) {
  return {{"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", labels}}},
          {"spec", spec}};
}

TEST_CASE("the issue's message: a taint and a selector over three nodes", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("gpu", 1), Node("cpu-a"), Node("cpu-b")};
  nodes[0].taints = {{"nvidia.com/gpu", "", api::kNoSchedule}};
  nodes[0].labels["pool"] = "gpu";
  std::string message;
  CHECK_FALSE(ChooseNode(PodWith({{"nodeSelector", {{"pool", "gpu"}}}}), {}, nodes, &message));
  CHECK(message ==
        "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: }, 2 node(s) "
        "didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 "
        "Preemption is not helpful for scheduling.");
}

TEST_CASE("a toleration and a nodeSelector land on the tainted GPU node", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("a-cpu"), Node("b-gpu", 1)};
  nodes[1].taints = {{"nvidia.com/gpu", "present", api::kNoSchedule}};
  nodes[1].labels["nvidia.com/gpu.product"] = "H200";
  Json pod = PodWith({{"nodeSelector", {{"nvidia.com/gpu.product", "H200"}}},
                      {"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"},
                                        {"effect", "NoSchedule"}}}}});
  std::string message;
  auto chosen = ChooseNode(pod, {}, nodes, &message);
  REQUIRE(chosen);
  CHECK(nodes[*chosen].name == "b-gpu");
  // Without the toleration: the taint, with the value.
  pod["spec"].erase("tolerations");
  CHECK(UnfitReasons(pod, {}, nodes[1]) ==
        std::vector<std::string>{"node(s) had untolerated taint {nvidia.com/gpu: present}"});
}

TEST_CASE("PreferNoSchedule only scores, preferred affinity wins a tie", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("a"), Node("b")};
  nodes[0].taints = {{"spot", "", api::kPreferNoSchedule}};
  std::string message;
  auto chosen = ChooseNode(PodWith(Json::object()), {}, nodes, &message);
  REQUIRE(chosen);
  CHECK(nodes[*chosen].name == "b");
  nodes[0].taints.clear();
  nodes[1].labels["zone"] = "z2";
  Json pod = PodWith({{"affinity",
                       {{"nodeAffinity",
                         {{"preferredDuringSchedulingIgnoredDuringExecution",
                           {{{"weight", 10},
                             {"preference",
                              {{"matchExpressions",
                                {{{"key", "zone"}, {"operator", "In"}, {"values", {"z2"}}}}}}}}}}}}}}});
  chosen = ChooseNode(pod, {}, nodes, &message);
  REQUIRE(chosen);
  CHECK(nodes[*chosen].name == "b");
}

TEST_CASE("required node affinity: terms ORed, expressions ANDed", "[scheduler]") {
  NodeView n = Node("n1");
  n.labels["gpu"] = "2";
  auto term = [](const Json& exprs) { return Json{{"matchExpressions", exprs}}; };
  auto pod = [](const Json& terms) {
    return PodWith({{"affinity",
                     {{"nodeAffinity",
                       {{"requiredDuringSchedulingIgnoredDuringExecution",
                         {{"nodeSelectorTerms", terms}}}}}}}});
  };
  Json gt1 = {{"key", "gpu"}, {"operator", "Gt"}, {"values", {"1"}}};
  Json no_zone = {{"key", "zone"}, {"operator", "Exists"}};
  using A = Json;
  CHECK(UnfitReasons(pod(A::array({term(A::array({gt1}))})), {}, n).empty());
  CHECK_FALSE(UnfitReasons(pod(A::array({term(A::array({gt1, no_zone}))})), {}, n).empty());
  CHECK(UnfitReasons(pod(A::array({term(A::array({no_zone})), term(A::array({gt1}))})), {}, n)
            .empty());
}

TEST_CASE("anti-affinity by hostname keeps two replicas apart", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("a"), Node("b")};
  Json master = PodWith(Json::object(), {{"job", "j"}});
  nodes[0].AddPod(&master);
  Json anti = {{"podAntiAffinity",
                {{"requiredDuringSchedulingIgnoredDuringExecution",
                  {{{"labelSelector", {{"matchLabels", {{"job", "j"}}}}},
                    {"topologyKey", "kubernetes.io/hostname"}}}}}}};
  Json worker = PodWith({{"affinity", anti}}, {{"job", "j"}});
  std::string message;
  auto chosen = ChooseNode(worker, {}, nodes, &message);
  REQUIRE(chosen);
  CHECK(nodes[*chosen].name == "b");
  nodes[1].AddPod(&master);
  CHECK_FALSE(ChooseNode(worker, {}, nodes, &message));
  CHECK(message ==
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod.");
  // An existing pod's term refuses the incoming pod too.
  Json plain = PodWith(Json::object(), {{"job", "j"}});
  NodeView c = Node("c");
  Json holder = PodWith({{"affinity", anti}}, {{"job", "j"}});
  c.AddPod(&holder);
  std::vector<NodeView> one = {c};
  CHECK(UnfitReasons(plain, {}, one[0], {}, &one) ==
        std::vector<std::string>{"node(s) didn't satisfy existing pods anti-affinity rules"});
}

TEST_CASE("topology spread by hostname: maxSkew over the nodes", "[scheduler]") {
  std::vector<NodeView> nodes = {Node("a"), Node("b")};
  Json other = PodWith(Json::object(), {{"app", "x"}});
  nodes[0].pods = {&other};
  Json pod = PodWith({{"topologySpreadConstraints",
                       {{{"maxSkew", 1},
                         {"topologyKey", "kubernetes.io/hostname"},
                         {"whenUnsatisfiable", "DoNotSchedule"},
                         {"labelSelector", {{"matchLabels", {{"app", "x"}}}}}}}}},
                     {{"app", "x"}});
  CHECK(UnfitReasons(pod, {}, nodes[0], {}, &nodes) ==
        std::vector<std::string>{"node(s) didn't match pod topology spread constraints"});
  CHECK(UnfitReasons(pod, {}, nodes[1], {}, &nodes).empty());
  nodes[1].labels.erase("kubernetes.io/hostname");
  CHECK(UnfitReasons(pod, {}, nodes[1], {}, &nodes) ==
        std::vector<std::string>{
            "node(s) didn't match pod topology spread constraints (missing required label)"});
}

TEST_CASE("NoExecute: untolerated evicts at once, tolerationSeconds later", "[scheduler]") {
  std::vector<api::Taint> taints = {{"maintenance", "", api::kNoExecute}};
  CHECK(api::NoExecuteEvictionDelay(taints, {}) == 0);
  api::Toleration t{"maintenance", "Exists", "", "NoExecute", 30};
  CHECK(api::NoExecuteEvictionDelay(taints, {t}) == 30);
  t.seconds.reset();
  CHECK_FALSE(api::NoExecuteEvictionDelay(taints, {t}));
}

}  // namespace
}  // namespace pjemu::scheduler
