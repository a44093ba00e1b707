#include "emulator/scheduler/fit.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/node_affinity.h"
#include "emulator/api/persistent_volumes.h"

namespace pjemu::scheduler {

NodeView ViewOfNode(const Json& node) {
  NodeView v;
  const Json& meta = api::Field(node, "metadata");
  v.name = api::Str(meta, "name");
  for (const auto& [k, val] : api::Field(meta, "labels").items()) {
    if (val.is_string()) v.labels[k] = val.get<std::string>();
  }
  const Json& status = api::Field(node, "status");
  const Json& allocatable = api::Field(status, "allocatable");
  auto alloc = api::ParseResourceList(allocatable.is_null() ? Json::object() : allocatable);
  if (alloc.ok()) v.allocatable = *alloc;
  for (const Json& c : api::ArrayOr(api::Field(status, "conditions"))) {
    if (api::Str(c, "type") == "Ready") v.ready = api::Str(c, "status") == "True";
  }
  const Json& unschedulable = api::Field(api::Field(node, "spec"), "unschedulable");
  v.unschedulable = unschedulable.is_boolean() && unschedulable.get<bool>();
  v.taints = api::TaintsOf(node);
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

bool Unresolvable(const std::string& reason) {
  return reason.rfind("node(s) had untolerated taint", 0) == 0 ||
         reason == "node(s) didn't match Pod's node affinity/selector" ||
         reason == "node(s) were unschedulable" ||
         reason == "node(s) had volume node affinity conflict" ||
         reason ==
             "node(s) didn't match pod topology spread constraints (missing required label)";
}

std::string FitErrorMessage(std::size_t nodes, const std::map<std::string, int>& reason_counts,
                            int unresolvable_nodes) {
  auto histogram = [](const std::map<std::string, int>& counts) {
    std::vector<std::string> entries;
    for (const auto& [reason, n] : counts) entries.push_back(std::to_string(n) + " " + reason);
    std::sort(entries.begin(), entries.end());
    std::string text;
    for (const std::string& e : entries) text += (text.empty() ? "" : ", ") + e;
    return text;
  };
  const std::string all = "0/" + std::to_string(nodes) + " nodes are available: ";
  std::map<std::string, int> preemption;
  if (unresolvable_nodes > 0)
    preemption["Preemption is not helpful for scheduling"] = unresolvable_nodes;
  if (static_cast<std::size_t>(unresolvable_nodes) < nodes) {
    preemption["No preemption victims found for incoming pod"] =
        static_cast<int>(nodes) - unresolvable_nodes;
  }
  return all + histogram(reason_counts) + ". preemption: " + all + histogram(preemption) + ".";
}

std::vector<std::string> UnfitReasons(const Json& pod, const api::ResourceList& requests,
                                      const NodeView& node, const std::vector<ClaimView>& claims,
                                      const std::vector<NodeView>* all) {
  std::vector<std::string> reasons;
  // Filters in the default profile's order; the first that fails decides.
  if (node.unschedulable) {
    bool tolerated = false;
    for (const api::Toleration& t : api::TolerationsOf(pod)) {
      tolerated |= t.Tolerates({"node.kubernetes.io/unschedulable", "", api::kNoSchedule});
    }
    if (!tolerated) return {"node(s) were unschedulable"};
  }
  if (std::string taint = TaintFilter(pod, node); !taint.empty()) return {taint};
  if (!api::PodMatchesNodeAffinity(pod, node.labels, node.name))
    return {"node(s) didn't match Pod's node affinity/selector"};
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
  if (!reasons.empty() || all == nullptr) return reasons;
  if (std::string spread = TopologySpreadFilter(pod, node, *all); !spread.empty()) return {spread};
  if (std::string anti = AntiAffinityFilter(pod, node, *all); !anti.empty()) return {anti};
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
  // Filter, then score the nodes that fit: raw figures first, normalized over the fitting nodes.
  std::map<std::string, int> counts;
  int unresolvable = 0;
  struct Candidate {
    std::size_t index;
    int untolerated_prefer;  // TaintToleration: PreferNoSchedule taints not tolerated
    std::int64_t affinity;   // NodeAffinity: weights of the preferred terms that match
    double least;            // NodeResourcesFit: mean free share of cpu and memory, 0..1
  };
  std::vector<Candidate> fitting;
  const auto tolerations = api::TolerationsOf(pod);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto reasons = UnfitReasons(pod, requests, nodes[i], claims, &nodes);
    if (!reasons.empty()) {
      bool hopeless = false;
      for (const auto& r : reasons) {
        ++counts[r];
        hopeless |= Unresolvable(r);
      }
      unresolvable += hopeless ? 1 : 0;
      continue;
    }
    double least = 0;
    for (const char* r : {"cpu", "memory"}) {
      auto alloc = nodes[i].allocatable.count(r) ? nodes[i].allocatable.at(r) : 0;
      auto used = (nodes[i].used.count(r) ? nodes[i].used.at(r) : 0) +
                  (requests.count(r) ? requests.at(r) : 0);
      least += alloc > 0 ? static_cast<double>(alloc - used) / static_cast<double>(alloc) / 2 : 0;
    }
    fitting.push_back({i, api::UntoleratedPreferNoSchedule(nodes[i].taints, tolerations),
                       api::PreferredNodeAffinityWeight(pod, nodes[i].labels, nodes[i].name),
                       least});
  }
  int max_prefer = 0;
  std::int64_t max_affinity = 0;
  for (const Candidate& c : fitting) {
    max_prefer = std::max(max_prefer, c.untolerated_prefer);
    max_affinity = std::max(max_affinity, c.affinity);
  }
  double best_score = -1;
  for (const Candidate& c : fitting) {
    double taint = max_prefer == 0 ? 100 : 100.0 * (max_prefer - c.untolerated_prefer) / max_prefer;
    double affinity = max_affinity <= 0 ? 0 : 100.0 * c.affinity / max_affinity;
    double score = 3 * taint + 2 * affinity + 100 * c.least;
    if (!best || score > best_score + 1e-9 ||
        (score > best_score - 1e-9 && nodes[c.index].name < nodes[*best].name)) {
      best = c.index;
      best_score = score;
    }
  }
  if (best) return best;
  if (nodes.empty()) {
    *message = "no nodes available to schedule pods";
    return std::nullopt;
  }
  *message = FitErrorMessage(nodes.size(), counts, unresolvable);
  return std::nullopt;
}

}  // namespace pjemu::scheduler
