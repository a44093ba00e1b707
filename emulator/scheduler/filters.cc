// The placement filters over taints, pod anti-affinity and topology spread (fit.h).
#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/node_affinity.h"
#include "emulator/api/selector.h"
#include "emulator/scheduler/fit.h"

namespace pjemu::scheduler {
namespace {

using api::ArrayOr;
using api::Field;
using api::FieldAt;

std::string Namespace(const Json& pod) { return api::Str(Field(pod, "metadata"), "namespace"); }

const Json& Labels(const Json& pod) { return FieldAt(pod, {"metadata", "labels"}); }

// The node's value of a topology key, or nullptr when it lacks the label.
const std::string* Domain(const NodeView& node, const std::string& key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? nullptr : &it->second;
}

// A pod affinity term's selector matches `other` (the term's namespaces, else the owner's).
bool TermMatches(const Json& term, const std::string& owner_ns, const Json& other) {
  std::vector<std::string> namespaces;
  for (const Json& n : ArrayOr(Field(term, "namespaces"))) {
    if (n.is_string()) namespaces.push_back(n.get<std::string>());
  }
  const std::string ns = Namespace(other);
  if (namespaces.empty() ? ns != owner_ns
                         : std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end())
    return false;
  const Json& selector = Field(term, "labelSelector");
  if (!selector.is_object()) return false;  // a null selector matches no pod
  auto parsed = api::LabelSelector::FromObject(selector, "labelSelector");
  return parsed.ok() && parsed->MatchesLabels(Labels(other));
}

const Json& RequiredAntiAffinity(const Json& pod) {
  return ArrayOr(FieldAt(pod, {"spec", "affinity", "podAntiAffinity",
                               "requiredDuringSchedulingIgnoredDuringExecution"}));
}

}  // namespace

void NodeView::AddPod(const Json* pod, bool anti_affinity) {
  pods.push_back(pod);
  if (anti_affinity) anti_affinity_pods.push_back(pod);
}

bool NodeView::HasRequiredAntiAffinity(const Json& pod) {
  return !RequiredAntiAffinity(pod).empty();
}

bool NodeView::HasPlacementTerms(const Json& pod) {
  return HasRequiredAntiAffinity(pod) ||
         !ArrayOr(FieldAt(pod, {"spec", "topologySpreadConstraints"})).empty();
}

std::string TaintFilter(const Json& pod, const NodeView& node) {
  std::vector<api::Taint> taints = node.taints;
  if (!node.ready) {
    // The node lifecycle controller's taint of a node that is not Ready.
    bool tainted = false;
    for (const api::Taint& t : taints) {
      tainted |= t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable";
    }
    if (!tainted) taints.push_back({"node.kubernetes.io/not-ready", "", api::kNoSchedule});
  }
  auto untolerated = api::FirstUntolerated(taints, api::TolerationsOf(pod),
                                           {api::kNoSchedule, api::kNoExecute});
  if (!untolerated) return "";
  return "node(s) had untolerated taint {" + untolerated->key + ": " + untolerated->value + "}";
}

std::string AntiAffinityFilter(const Json& pod, const NodeView& node,
                               const std::vector<NodeView>& all) {
  const std::string ns = Namespace(pod);
  // The incoming pod's terms: no pod matching a term in the node's domain.
  for (const Json& term : RequiredAntiAffinity(pod)) {
    const std::string key = api::Str(term, "topologyKey");
    const std::string* domain = Domain(node, key);
    if (!domain) continue;
    for (const NodeView& other : all) {
      const std::string* d = Domain(other, key);
      if (!d || *d != *domain) continue;
      for (const Json* p : other.pods) {
        if (TermMatches(term, ns, *p)) return "node(s) didn't match pod anti-affinity rules";
      }
    }
  }
  // The existing pods' terms: none of them may match the incoming pod in this domain.
  for (const NodeView& other : all) {
    for (const Json* p : other.anti_affinity_pods) {
      for (const Json& term : RequiredAntiAffinity(*p)) {
        const std::string key = api::Str(term, "topologyKey");
        const std::string* domain = Domain(node, key);
        const std::string* d = Domain(other, key);
        if (domain && d && *d == *domain && TermMatches(term, Namespace(*p), pod))
          return "node(s) didn't satisfy existing pods anti-affinity rules";
      }
    }
  }
  return "";
}

std::string TopologySpreadFilter(const Json& pod, const NodeView& node,
                                 const std::vector<NodeView>& all) {
  const std::string ns = Namespace(pod);
  for (const Json& c : ArrayOr(FieldAt(pod, {"spec", "topologySpreadConstraints"}))) {
    if (api::Str(c, "whenUnsatisfiable") != "DoNotSchedule") continue;
    const std::string key = api::Str(c, "topologyKey");
    const Json& max_skew = Field(c, "maxSkew");
    const std::int64_t skew = max_skew.is_number_integer() ? max_skew.get<std::int64_t>() : 1;
    const std::string* domain = Domain(node, key);
    if (!domain) return "node(s) didn't match pod topology spread constraints (missing required label)";
    auto selector = api::LabelSelector::FromObject(
        Field(c, "labelSelector").is_object() ? Field(c, "labelSelector") : Json::object(),
        "labelSelector");
    if (!selector.ok()) continue;
    auto matches = [&](const Json& p) {
      return Namespace(p) == ns && Field(c, "labelSelector").is_object() &&
             selector->MatchesLabels(Labels(p));
    };
    // Pods per domain, over the nodes that carry the key and match the pod's node affinity
    // (nodeAffinityPolicy Honor, the default).
    std::map<std::string, std::int64_t> counts;
    for (const NodeView& other : all) {
      const std::string* d = Domain(other, key);
      if (!d || !api::PodMatchesNodeAffinity(pod, other.labels, other.name)) continue;
      std::int64_t& n = counts[*d];
      for (const Json* p : other.pods) n += matches(*p) ? 1 : 0;
    }
    std::int64_t min = counts.empty() ? 0 : INT64_MAX;
    for (const auto& [d, n] : counts) min = std::min(min, n);
    const std::int64_t self = matches(pod) ? 1 : 0;
    if (counts[*domain] + self - min > skew)
      return "node(s) didn't match pod topology spread constraints";
  }
  return "";
}

}  // namespace pjemu::scheduler
