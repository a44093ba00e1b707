// The namespace controller's deletion of a Terminating namespace (kube-controller-manager's
// namespaced_resources_deleter): delete every object in it (pods gracefully, through the
// kubelet), keep the status conditions it keeps, and once nothing is left remove the
// `kubernetes` finalizer and delete the namespace, which then goes.
#include <algorithm>
#include <vector>

#include "emulator/namespaces/namespace_controller.h"

namespace pjemu::namespaces {
namespace {

struct ConditionText {
  const char* type;
  bool status;
  std::string reason;
  std::string message;
};

// "pods. has 2 resource instances, secrets. has 1 resource instances" (sorted, as upstream).
std::string Counts(const std::map<std::string, int>& counts, const std::string& middle) {
  std::vector<std::string> parts;
  for (const auto& [what, n] : counts) {
    parts.push_back(what + middle + std::to_string(n) + " resource instances");
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

Json WithConditions(const Json& ns, const std::vector<ConditionText>& wanted, Time now) {
  Json status = ns.value("status", Json::object());
  Json old = status.value("conditions", Json::array());
  Json conditions = Json::array();
  for (const ConditionText& c : wanted) {
    std::string value = c.status ? "True" : "False";
    std::string since = FormatTime(now);
    for (const Json& o : old) {
      if (o.value("type", "") == c.type && o.value("status", "") == value) {
        since = o.value("lastTransitionTime", since);
      }
    }
    conditions.push_back({{"type", c.type},
                          {"status", value},
                          {"lastTransitionTime", since},
                          {"reason", c.reason},
                          {"message", c.message}});
  }
  status["conditions"] = conditions;
  status["phase"] = "Terminating";
  return status;
}

}  // namespace

bool NamespaceController::Finish(const Json& ns) {
  const std::string name = ns["metadata"].value("name", "");
  std::map<std::string, int> remaining, finalizers;
  std::vector<std::string> failures;
  for (const api::ResourceType& type : api::AllResources()) {
    if (!type.namespaced) continue;
    auto list = client_.List(type, name);
    if (!list.ok()) {
      failures.push_back(type.PluralGroup() + ": " + list.status().message());
      continue;
    }
    for (const Json& item : list->value("items", Json::array())) {
      const Json& meta = item["metadata"];
      std::string item_name = meta.value("name", "");
      if (!meta.contains("deletionTimestamp")) {
        auto deleted = client_.Delete(type, name, item_name);
        if (!deleted.ok() && deleted.status().code() != Code::kNotFound) {
          failures.push_back(type.PluralGroup() + " \"" + item_name +
                             "\": " + deleted.status().message());
        }
        // Gone at once (no grace, no finalizers): nothing remains of it.
        if (deleted.status().code() == Code::kNotFound ||
            (deleted.ok() && !(*deleted)["metadata"].contains("deletionTimestamp"))) {
          continue;
        }
      }
      ++remaining[type.plural + "." + type.group];
      for (const Json& f : meta.value("finalizers", Json::array())) {
        if (f.is_string()) ++finalizers[f.get<std::string>()];
      }
    }
  }
  const bool content_left = !remaining.empty();
  std::vector<ConditionText> conditions = {
      {"NamespaceDeletionDiscoveryFailure", false, "ResourcesDiscovered",
       "All resources successfully discovered"},
      {"NamespaceDeletionGroupVersionParsingFailure", false, "ParsedGroupVersions",
       "All legacy kube types successfully parsed"},
      failures.empty()
          ? ConditionText{"NamespaceDeletionContentFailure", false, "ContentDeleted",
                          "All content successfully deleted, may be waiting on finalization"}
          : ConditionText{"NamespaceDeletionContentFailure", true, "ContentDeletionFailed",
                          "Failed to delete all resource types, " +
                              std::to_string(failures.size()) + " remaining: " + failures[0]},
      content_left ? ConditionText{"NamespaceContentRemaining", true, "SomeResourcesRemain",
                                   "Some resources are remaining: " + Counts(remaining, " has ")}
                   : ConditionText{"NamespaceContentRemaining", false, "ContentRemoved",
                                   "All content successfully removed"},
      finalizers.empty()
          ? ConditionText{"NamespaceFinalizersRemaining", false, "ContentHasNoFinalizers",
                          "All content-preserving finalizers finished"}
          : ConditionText{"NamespaceFinalizersRemaining", true, "SomeFinalizersRemain",
                          "Some content in the namespace has finalizers remaining: " +
                              Counts(finalizers, " in ")},
  };
  Json status = WithConditions(ns, conditions, loop_.Now());
  if (status != ns.value("status", Json::object())) {
    Json next = ns;
    next["status"] = status;
    next["metadata"].erase("resourceVersion");  // the controller's status wins
    auto written = client_.Update(api::Namespaces(), "", next, client::Subresource::kStatus);
    if (!written.ok() && written.status().code() != Code::kNotFound) return false;
  }
  if (content_left || !failures.empty()) return false;
  // Finalized by us: the `kubernetes` finalizer goes, then the namespace.
  auto current = client_.Get(api::Namespaces(), "", name);
  if (!current.ok()) return current.status().code() == Code::kNotFound;
  Json next = *current;
  Json kept = Json::array();
  for (const Json& f : next.value("spec", Json::object()).value("finalizers", Json::array())) {
    if (f != "kubernetes") kept.push_back(f);
  }
  next["spec"]["finalizers"] = kept;
  auto finalized = client_.Update(api::Namespaces(), "", next);
  if (!finalized.ok()) return finalized.status().code() == Code::kNotFound;
  if (!kept.empty()) return true;  // another finalizer's owner finishes it
  auto deleted = client_.Delete(api::Namespaces(), "", name);
  return deleted.ok() || deleted.status().code() == Code::kNotFound;
}

}  // namespace pjemu::namespaces
