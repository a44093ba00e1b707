#include "emulator/api/node_affinity.h"

#include <algorithm>

#include "emulator/api/json_fields.h"

namespace pjemu::api {
namespace {

std::vector<std::string> Values(const Json& requirement) {
  std::vector<std::string> out;
  for (const Json& v : ArrayOr(Field(requirement, "values"))) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool ParseInt(const std::string& s, std::int64_t* out) {
  try {
    std::size_t used = 0;
    *out = std::stoll(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

// One NodeSelectorRequirement against a value (nullptr when the node lacks the key).
bool RequirementMatches(const Json& requirement, const std::string* value) {
  const std::string op = Str(requirement, "operator");
  const std::vector<std::string> values = Values(requirement);
  auto in = [&] {
    return value && std::find(values.begin(), values.end(), *value) != values.end();
  };
  if (op == "In") return in();
  if (op == "NotIn") return !in();
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  if (op == "Gt" || op == "Lt") {
    std::int64_t have = 0, want = 0;
    if (!value || values.size() != 1 || !ParseInt(*value, &have) || !ParseInt(values[0], &want))
      return false;
    return op == "Gt" ? have > want : have < want;
  }
  return false;
}

}  // namespace

bool MatchesNodeSelectorTerm(const Json& term, const NodeLabels& labels,
                             const std::string& node_name) {
  const Json& expressions = ArrayOr(Field(term, "matchExpressions"));
  const Json& fields = ArrayOr(Field(term, "matchFields"));
  if (expressions.empty() && fields.empty()) return false;  // an empty term matches nothing
  for (const Json& r : expressions) {
    auto it = labels.find(Str(r, "key"));
    if (!RequirementMatches(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  for (const Json& r : fields) {
    const bool name_field = Str(r, "key") == "metadata.name";
    if (!RequirementMatches(r, name_field ? &node_name : nullptr)) return false;
  }
  return true;
}

bool PodMatchesNodeAffinity(const Json& pod, const NodeLabels& labels,
                            const std::string& node_name) {
  const Json& selector = FieldAt(pod, {"spec", "nodeSelector"});
  if (selector.is_object()) {
    for (auto& [k, v] : selector.items()) {
      auto it = labels.find(k);
      if (it == labels.end() || !v.is_string() || it->second != v.get<std::string>()) return false;
    }
  }
  const Json& required =
      FieldAt(pod, {"spec", "affinity", "nodeAffinity",
                    "requiredDuringSchedulingIgnoredDuringExecution"});
  if (!required.is_object()) return true;
  for (const Json& term : ArrayOr(Field(required, "nodeSelectorTerms"))) {
    if (MatchesNodeSelectorTerm(term, labels, node_name)) return true;
  }
  return false;
}

std::int64_t PreferredNodeAffinityWeight(const Json& pod, const NodeLabels& labels,
                                         const std::string& node_name) {
  std::int64_t sum = 0;
  for (const Json& p : ArrayOr(FieldAt(pod, {"spec", "affinity", "nodeAffinity",
                                             "preferredDuringSchedulingIgnoredDuringExecution"}))) {
    const Json& w = Field(p, "weight");
    if (w.is_number_integer() && MatchesNodeSelectorTerm(Field(p, "preference"), labels, node_name))
      sum += w.get<std::int64_t>();
  }
  return sum;
}

}  // namespace pjemu::api
