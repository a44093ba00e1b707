#include "emulator/cluster/cluster_config.h"

#include <set>

#include "emulator/api/resource_quantity.h"
#include "emulator/api/selector.h"
#include "emulator/api/taints.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::cluster {
namespace {

using manifest::Manifest;

const std::set<std::string> kTopKeys = {
    "kind", "apiVersion", "name", "nodes", "networking", "featureGates", "runtimeConfig",
    "kubeadmConfigPatches", "kubeadmConfigPatchesJSON6902", "containerdConfigPatches",
    "containerdConfigPatchesJSON6902"};
const std::set<std::string> kNodeKeys = {
    "role", "image", "labels", "extraMounts", "extraPortMappings", "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
    // pjemu's
    "name", "taints", "capacity", "gpus"};

Status Error(const Manifest& m, const std::string& field, const std::string& problem) {
  return manifest::FieldError(m, field, problem);
}

Status UnknownKeys(const Manifest& m, const Json& obj, const std::set<std::string>& known,
                   const std::string& at) {
  for (auto& [k, v] : obj.items()) {
    if (!known.count(k))
      return Error(m, at.empty() ? k : at + "." + k, "unknown field \"" + k + "\"");
  }
  return Status::Ok();
}

// A capacity quantity as the Node shows it ("8", "32Gi"): kept as written once it parses.
Result<std::string> QuantityText(const Manifest& m, const Json& v, const std::string& field) {
  if (!v.is_string() && !v.is_number()) return Error(m, field, "expected a quantity");
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (!api::Quantity::Parse(text).ok())
    return Error(m, field, "quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  return text;
}

Status ReadCapacity(const Manifest& m, const Json& c, const std::string& at, NodeConfig* n) {
  if (!c.is_object()) return Error(m, at, "expected an object");
  RETURN_IF_ERROR(UnknownKeys(m, c, {"cpu", "memory", "pods"}, at));
  if (c.contains("cpu")) {
    ASSIGN_OR_RETURN(n->cpu, QuantityText(m, c["cpu"], at + ".cpu"));
  }
  if (c.contains("memory")) {
    ASSIGN_OR_RETURN(n->memory, QuantityText(m, c["memory"], at + ".memory"));
  }
  if (c.contains("pods")) {
    if (!c["pods"].is_number_integer() || c["pods"].get<std::int64_t>() < 1)
      return Error(m, at + ".pods", "expected an integer >= 1");
    n->max_pods = c["pods"].get<int>();
  }
  return Status::Ok();
}

Status ReadGpus(const Manifest& m, const Json& g, const std::string& at, NodeConfig* n) {
  if (g.is_number_integer()) {
    if (g.get<std::int64_t>() < 0) return Error(m, at, "must be >= 0");
    n->gpus = g.get<int>();
    return Status::Ok();
  }
  if (!g.is_array()) return Error(m, at, "expected a count or a list of the machine's GPU indices");
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!g[i].is_number_integer() || g[i].get<std::int64_t>() < 0)
      return Error(m, at + "[" + std::to_string(i) + "]", "expected a GPU index >= 0");
    n->gpu_indices.push_back(g[i].get<int>());
  }
  return Status::Ok();
}

Status ReadLabels(const Manifest& m, const Json& l, const std::string& at, NodeConfig* n) {
  if (!l.is_object()) return Error(m, at, "expected a map of strings");
  for (auto& [k, v] : l.items()) {
    if (!v.is_string()) return Error(m, at + "[" + k + "]", "expected a string");
    n->labels[k] = v.get<std::string>();
  }
  return Status::Ok();
}

Result<NodeConfig> ReadNode(const Manifest& m, const Json& node, const std::string& at) {
  if (!node.is_object()) return Error(m, at, "expected an object");
  RETURN_IF_ERROR(UnknownKeys(m, node, kNodeKeys, at));
  NodeConfig n;
  n.role = "control-plane";  // kind's default
  if (node.contains("role")) {
    if (!node["role"].is_string() ||
        (node["role"] != "control-plane" && node["role"] != "worker")) {
      return Error(m, at + ".role",
                   "Unsupported value: supported values: \"control-plane\", \"worker\"");
    }
    n.role = node["role"].get<std::string>();
  }
  if (node.contains("name")) {
    if (!node["name"].is_string() || node["name"].get<std::string>().empty())
      return Error(m, at + ".name", "expected a non-empty string");
    n.name = node["name"].get<std::string>();
  }
  if (node.contains("labels")) RETURN_IF_ERROR(ReadLabels(m, node["labels"], at + ".labels", &n));
  if (node.contains("taints")) {
    if (Status s = api::ValidateTaints(node["taints"], at + ".taints"); !s.ok()) {
      // "nodes[0].taints[1].effect: Unsupported ..." -> its line.
      std::string msg = s.message();
      std::string field = msg.substr(0, msg.find(": "));
      return Error(m, field, msg.substr(msg.find(": ") + 2));
    }
    n.taints = node["taints"];
  }
  if (node.contains("capacity"))
    RETURN_IF_ERROR(ReadCapacity(m, node["capacity"], at + ".capacity", &n));
  if (node.contains("gpus")) RETURN_IF_ERROR(ReadGpus(m, node["gpus"], at + ".gpus", &n));
  return n;
}

// kind's names (<cluster>-<role>, then <cluster>-<role>2, ...) where a node has none, and the
// control-plane role's label and (with more than one node) taint.
void ApplyKindDefaults(const std::string& cluster, std::vector<NodeConfig>* nodes) {
  std::map<std::string, int> per_role;
  for (NodeConfig& n : *nodes) {
    int k = ++per_role[n.role];
    if (n.name.empty()) n.name = cluster + "-" + n.role + (k == 1 ? "" : std::to_string(k));
    if (n.role != "control-plane") continue;
    n.labels.emplace("node-role.kubernetes.io/control-plane", "");
    if (nodes->size() > 1) {
      n.taints.insert(n.taints.begin(), Json{{"key", "node-role.kubernetes.io/control-plane"},
                                             {"effect", "NoSchedule"}});
    }
  }
}

Result<std::vector<NodeConfig>> Interpret(const std::vector<Manifest>& docs) {
  if (docs.size() != 1) {
    return Status(Code::kInvalid, docs[0].source + ": expected one Cluster document, got " +
                                      std::to_string(docs.size()));
  }
  const Manifest& m = docs[0];
  const Json& c = m.object;
  if (c.value("kind", "") != "Cluster") return Error(m, "kind", "expected \"Cluster\"");
  if (c.value("apiVersion", "") != "kind.x-k8s.io/v1alpha4")
    return Error(m, "apiVersion", "expected \"kind.x-k8s.io/v1alpha4\"");
  RETURN_IF_ERROR(UnknownKeys(m, c, kTopKeys, ""));
  std::string cluster = "kind";
  if (c.contains("name")) {
    if (!c["name"].is_string()) return Error(m, "name", "expected a string");
    cluster = c["name"].get<std::string>();
  }
  std::vector<NodeConfig> nodes;
  const Json nodes_json = c.value("nodes", Json::array());
  if (!nodes_json.is_array()) return Error(m, "nodes", "expected a list");
  for (std::size_t i = 0; i < nodes_json.size(); ++i) {
    ASSIGN_OR_RETURN(NodeConfig n, ReadNode(m, nodes_json[i], "nodes[" + std::to_string(i) + "]"));
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) nodes.push_back(NodeConfig{.role = "control-plane"});  // kind's default
  ApplyKindDefaults(cluster, &nodes);
  std::set<std::string> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!names.insert(nodes[i].name).second) {
      return Error(m, "nodes[" + std::to_string(i) + "].name",
                   "Duplicate value: \"" + nodes[i].name + "\"");
    }
  }
  return nodes;
}

}  // namespace

Result<std::vector<NodeConfig>> LoadClusterConfig(const std::string& path) {
  ASSIGN_OR_RETURN(auto docs, manifest::LoadManifestFile(path));
  return Interpret(docs);
}

Result<std::vector<NodeConfig>> ParseClusterConfig(const std::string& text,
                                                   const std::string& source) {
  ASSIGN_OR_RETURN(auto docs, manifest::LoadManifestText(text, source));
  return Interpret(docs);
}

}  // namespace pjemu::cluster
