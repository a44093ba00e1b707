#include "emulator/scheduler/fit.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"

namespace pjemu::scheduler {

NodeView ViewOfNode(const Json& node) {
  NodeView v;
  v.name = node["metadata"].value("name", "");
  const Json labels = node["metadata"].value("labels", Json::object());
  for (auto& [k, val] : labels.items()) {
    if (val.is_string()) v.labels[k] = val.get<std::string>();
  }
  Json status = node.value("status", Json::object());
  auto alloc = api::ParseResourceList(status.value("allocatable", Json::object()));
  if (alloc.ok()) v.allocatable = *alloc;
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready") v.ready = c.value("status", "") == "True";
  }
  v.unschedulable = node.value("spec", Json::object()).value("unschedulable", false);
  return v;
}

std::vector<std::string> PodClaimNames(const Json& pod) {
  std::vector<std::string> names;
  for (const Json& v : api::ArrayOr(api::FieldAt(pod, {"spec", "volumes"}))) {
    std::string claim = api::Str(api::Field(v, "persistentVolumeClaim"), "claimName");
    if (!claim.empty() && std::find(names.begin(), names.end(), claim) == names.end())
      names.push_back(claim);
  }
  return names;
}

ClaimView ViewOfClaim(const std::string& name, const Json& claim, const Json& storage_class,
                      const Json& volume) {
  using api::FieldAt;
  ClaimView v;
  v.name = name;
  v.found = claim.is_object();
  if (!v.found) return v;
  v.deleting = FieldAt(claim, {"metadata", "deletionTimestamp"}).is_string();
  v.bound = !api::Str(api::Field(claim, "spec"), "volumeName").empty();
  v.selected_node =
      api::Str(FieldAt(claim, {"metadata", "annotations"}), api::kSelectedNodeAnnotation);
  if (v.bound) {
    v.volume_nodes = api::VolumeNodes(volume);  // a missing volume: any node
    return v;
  }
  const Json& class_name = FieldAt(claim, {"spec", "storageClassName"});
  if (class_name.is_string() && !class_name.get<std::string>().empty() &&
      !storage_class.is_object()) {
    v.class_error =
        "storageclass.storage.k8s.io \"" + class_name.get<std::string>() + "\" not found";
  }
  v.wait_for_first_consumer =
      api::Str(storage_class, "volumeBindingMode") == "WaitForFirstConsumer";
  return v;
}

std::string ClaimsPreFilter(const std::vector<ClaimView>& claims, bool* error) {
  *error = false;
  bool unbound_immediate = false;
  for (const ClaimView& c : claims) {
    if (!c.found) return "persistentvolumeclaim \"" + c.name + "\" not found";
    if (c.deleting) return "persistentvolumeclaim \"" + c.name + "\" is being deleted";
    if (!c.bound && !c.class_error.empty()) {
      *error = true;
      return "running PreFilter plugin \"VolumeBinding\": " + c.class_error;
    }
    if (!c.bound && !c.wait_for_first_consumer) unbound_immediate = true;
  }
  return unbound_immediate ? "pod has unbound immediate PersistentVolumeClaims" : "";
}

std::vector<std::string> UnfitReasons(const Json& pod, const api::ResourceList& requests,
                                      const NodeView& node, const std::vector<ClaimView>& claims) {
  std::vector<std::string> reasons;
  Json spec = pod.value("spec", Json::object());
  if (!node.ready) {
    reasons.push_back("node(s) had untolerated taint {node.kubernetes.io/not-ready: }");
    return reasons;
  }
  if (node.unschedulable) {
    reasons.push_back("node(s) were unschedulable");
    return reasons;
  }
  const Json selector = spec.value("nodeSelector", Json::object());
  for (auto& [k, v] : selector.items()) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || !v.is_string() || it->second != v.get<std::string>()) {
      reasons.push_back("node(s) didn't match Pod's node affinity/selector");
      return reasons;
    }
  }
  auto get = [](const api::ResourceList& l, const std::string& k) -> std::int64_t {
    auto it = l.find(k);
    return it == l.end() ? 0 : it->second;
  };
  if (get(node.used, "pods") + 1 > get(node.allocatable, "pods"))
    reasons.push_back("Too many pods");
  for (const auto& [name, amount] : requests) {
    if (amount <= 0 || name == "pods") continue;
    if (amount > get(node.allocatable, name) - get(node.used, name)) {
      reasons.push_back("Insufficient " + name);
    }
  }
  if (!reasons.empty()) return reasons;
  for (const ClaimView& c : claims) {
    if (c.bound && !c.volume_nodes.empty() &&
        std::find(c.volume_nodes.begin(), c.volume_nodes.end(), node.name) ==
            c.volume_nodes.end()) {
      reasons.push_back("node(s) had volume node affinity conflict");
      break;
    }
    // A claim the provisioner was asked to provision on another node is held to that node.
    if (!c.bound && c.wait_for_first_consumer && !c.selected_node.empty() &&
        c.selected_node != node.name) {
      reasons.push_back("node(s) didn't find available persistent volumes to bind");
      break;
    }
  }
  return reasons;
}

std::optional<std::size_t> ChooseNode(const Json& pod, const api::ResourceList& requests,
                                      const std::vector<NodeView>& nodes, std::string* message,
                                      const std::vector<ClaimView>& claims) {
  std::optional<std::size_t> best;
  if (!nodes.empty()) {
    bool error = false;
    std::string pre = ClaimsPreFilter(claims, &error);
    if (!pre.empty()) {
      *message =
          error ? pre : "0/" + std::to_string(nodes.size()) + " nodes are available: " + pre + ".";
      return std::nullopt;
    }
  }
  double best_score = -1;
  std::map<std::string, int> counts;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto reasons = UnfitReasons(pod, requests, nodes[i], claims);
    if (!reasons.empty()) {
      for (const auto& r : reasons) ++counts[r];
      continue;
    }
    // LeastAllocated: the mean free share of cpu and memory after placing the pod.
    double score = 0;
    for (const char* r : {"cpu", "memory"}) {
      auto alloc = nodes[i].allocatable.count(r) ? nodes[i].allocatable.at(r) : 0;
      auto used = (nodes[i].used.count(r) ? nodes[i].used.at(r) : 0) +
                  (requests.count(r) ? requests.at(r) : 0);
      score += alloc > 0 ? static_cast<double>(alloc - used) / static_cast<double>(alloc) : 0;
    }
    if (!best || score > best_score + 1e-12 ||
        (score > best_score - 1e-12 && nodes[i].name < nodes[*best].name)) {
      best = i;
      best_score = score;
    }
  }
  if (best) return best;
  if (nodes.empty()) {
    *message = "no nodes available to schedule pods";
    return std::nullopt;
  }
  // kube-scheduler's FitError: reasons sorted by text, each with its node count.
  std::string text;
  for (const auto& [reason, n] : counts) {
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
  }
  *message = "0/" + std::to_string(nodes.size()) + " nodes are available: " + text + ".";
  return std::nullopt;
}

}  // namespace pjemu::scheduler
