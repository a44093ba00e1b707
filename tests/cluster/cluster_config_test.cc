// Given a kind-shaped cluster config, the cluster should get kind's names and control-plane
// taint, pjemu's per-node fields, and errors that name the field and line.
#include "emulator/cluster/cluster_config.h"

#include <catch2/catch.hpp>

namespace pjemu::cluster {
namespace {

TEST_CASE("a kind config: names, roles, labels, taints, capacity, GPUs", "[cluster]") {
  auto nodes = LoadClusterConfig(std::string(PJEMU_SOURCE_DIR) + "/fixtures/clusters/tainted-gpu-pool.yaml");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 3);
  CHECK((*nodes)[0].name == "pjemu-control-plane");
  CHECK((*nodes)[0].taints[0]["key"] == "node-role.kubernetes.io/control-plane");
  CHECK((*nodes)[0].labels.count("node-role.kubernetes.io/control-plane") == 1);
  CHECK((*nodes)[1].name == "cpu-node");
  CHECK((*nodes)[1].cpu == "4");
  CHECK((*nodes)[1].memory == "8Gi");
  CHECK((*nodes)[1].max_pods == 50);
  CHECK((*nodes)[2].taints[0]["effect"] == "NoSchedule");
  CHECK((*nodes)[2].gpus == 2);
}

TEST_CASE("one node of kind's default keeps no control-plane taint", "[cluster]") {
  auto nodes = ParseClusterConfig("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n", "c.yaml");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 1);
  CHECK((*nodes)[0].name == "kind-control-plane");
  CHECK((*nodes)[0].taints.empty());
}

TEST_CASE("config errors name the file, line and field", "[cluster]") {
  auto bad = ParseClusterConfig(
      "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: worker\n  taints:\n"
      "  - key: a\n    effect: Sometimes\n",
      "c.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("c.yaml:7: nodes[0].taints[0].effect: Unsupported value") == 0);
  bad = ParseClusterConfig(
      "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: worker\n  gpu: 1\n", "c.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "c.yaml:5: nodes[0].gpu: unknown field \"gpu\"");
}

TEST_CASE("nodes of --nodes N share the machine's GPUs out, counts take free ones", "[cluster]") {
  ClusterOptions o;
  o.node_count = 2;
  auto nodes = ResolveNodes(o, 4);
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[1].name == "pjemu-node2");
  CHECK(nodes[0].gpu_indices == std::vector<int>{0, 1});
  CHECK(nodes[1].gpu_indices == std::vector<int>{2, 3});
  o.gpus = 1;  // one each: the machine's 0 and 1
  nodes = ResolveNodes(o, 4);
  CHECK(nodes[0].gpu_indices == std::vector<int>{0});
  CHECK(nodes[1].gpu_indices == std::vector<int>{1});
  nodes = ResolveNodes(o, 0);  // no GPUs here: one pretend GPU each
  CHECK(nodes[0].gpus == 1);
  CHECK(nodes[0].gpu_indices.empty());
}

}  // namespace
}  // namespace pjemu::cluster
