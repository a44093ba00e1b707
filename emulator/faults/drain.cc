// The Injector's drain fault (injector.h), and the node a node action names or implies: what
// `kubectl drain --ignore-daemonsets` does, through the API: cordon the node, evict (Client::Evict)
// every pod bound to it that needs it, and retry the evictions its PodDisruptionBudgets refuse
// (429) every second until none is refused or the fault's timeout; the log entry is written when it
// ends.
#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"
#include "emulator/faults/injector.h"

namespace pjemu::faults {

struct Injector::Drain {
  FaultRecord record;
  std::string node;
  Time deadline{};
  std::vector<std::string> evicted;  // ns/name, in eviction order
};

namespace {

using api::Field;
using api::FieldAt;
using api::Str;

constexpr Duration kDrainRetry = 1s;  // kubectl drain's pause between refused evictions

bool OwnedByDaemonSet(const Json& pod) {
  for (const Json& ref : api::ArrayOr(FieldAt(pod, {"metadata", "ownerReferences"}))) {
    if (Str(ref, "kind") == "DaemonSet" && ref.value("controller", false)) return true;
  }
  return false;
}

// The pods of `node` a drain evicts, as ns/name: not DaemonSet-owned (--ignore-daemonsets), not
// mirror pods, not already terminating or terminal.
Result<std::vector<std::pair<std::string, std::string>>> PodsToEvict(client::Client& client,
                                                                     const std::string& node) {
  ASSIGN_OR_RETURN(Json pods, client.List(api::Pods(), ""));
  std::vector<std::pair<std::string, std::string>> out;
  for (const Json& pod : api::ArrayOr(Field(pods, "items"))) {
    const Json& meta = Field(pod, "metadata");
    const std::string phase = Str(Field(pod, "status"), "phase");
    if (Str(Field(pod, "spec"), "nodeName") != node || OwnedByDaemonSet(pod) ||
        Field(Field(meta, "annotations"), "kubernetes.io/config.mirror").is_string() ||
        !Field(meta, "deletionTimestamp").is_null() || phase == "Succeeded" || phase == "Failed") {
      continue;
    }
    out.emplace_back(Str(meta, "namespace"), Str(meta, "name"));
  }
  return out;
}

}  // namespace

Result<std::string> Injector::NodeOf(const std::string& named) {
  if (!named.empty()) return named;
  ASSIGN_OR_RETURN(Json nodes, client_.List(api::Nodes(), ""));
  const Json& items = api::ArrayOr(Field(nodes, "items"));
  if (items.size() != 1) {
    return Status(Code::kInvalid,
                  "the cluster has " + std::to_string(items.size()) + " nodes; name one (node:)");
  }
  return Str(Field(items[0], "metadata"), "name");
}

void Injector::StartDrain(const FaultSpec& spec, FaultRecord record) {
  auto node = NodeOf(spec.action.node);
  Status cordoned = node.status();
  if (node.ok()) {
    record.what += " " + *node;
    cordoned = client_
                   .Patch(api::Nodes(), "", *node, api::PatchType::kMerge,
                          {{"spec", {{"unschedulable", true}}}})
                   .status();
  }
  if (!cordoned.ok()) {
    record.result = cordoned;
    Finish(spec, std::move(record));
    return;
  }
  auto drain = std::make_shared<Drain>();
  drain->record = std::move(record);
  drain->node = *node;
  drain->deadline = loop_.Now() + spec.action.timeout;
  DrainStep(spec, std::move(drain));
}

// One pass: evicts what needs it; finishes, or comes back in a second while some are refused.
void Injector::DrainStep(const FaultSpec& spec, std::shared_ptr<Drain> drain) {
  auto pods = PodsToEvict(client_, drain->node);
  Status failed = pods.status();
  std::vector<std::pair<std::string, std::string>> none;
  std::vector<std::string> refused;
  Status refusal;
  for (const auto& [ns, name] : pods.ok() ? *pods : none) {
    Status s = client_.Evict(ns, name);
    if (s.ok()) {
      drain->evicted.push_back(ns + "/" + name);
    } else if (s.code() == Code::kTooManyRequests) {
      refused.push_back(ns + "/" + name);
      refusal = s;
    } else if (s.code() != Code::kNotFound && failed.ok()) {
      failed = s.WithContext("evict " + ns + "/" + name);
    }
  }
  const bool retry =
      failed.ok() && !refused.empty() && loop_.Now() + kDrainRetry <= drain->deadline;
  if (retry) {
    std::weak_ptr<bool> alive = alive_;
    timers_.push_back(loop_.PostAfter(kDrainRetry, [this, alive, spec, drain] {
      if (auto live = alive.lock(); live && *live) DrainStep(spec, drain);
    }));
    return;
  }
  FaultRecord record = std::move(drain->record);
  record.what += " cordoned, evicted " + std::to_string(drain->evicted.size()) +
                 (drain->evicted.empty() ? "" : " (" + Join(drain->evicted, " ") + ")");
  if (!refused.empty()) {
    record.what += ", still refused after " + FormatAge(spec.action.timeout) + " (" +
                   Join(refused, " ") + ")";
  }
  record.result = !failed.ok() ? failed : refusal;
  Finish(spec, std::move(record));
}

}  // namespace pjemu::faults
