#include "emulator/faults/node_lifecycle.h"

#include "emulator/api/event.h"
#include "emulator/api/pod_status.h"
#include "emulator/client/workloads.h"

namespace pjemu::faults {

namespace {

const api::EventSource kNodeController{"node-controller", ""};

std::string Key(const Json& pod) {
  return pod["metadata"].value("namespace", "") + "/" + pod["metadata"].value("name", "");
}

// Sets (or replaces) condition `type` in status.conditions; lastTransitionTime changes only
// when the status does, as the API's condition helpers do.
void SetCondition(Json& status, const std::string& type, const std::string& value,
                  const std::string& reason, const std::string& message, Time now) {
  Json conds = status.value("conditions", Json::array());
  std::string since = FormatTime(now);
  for (auto it = conds.begin(); it != conds.end(); ++it) {
    if (it->value("type", "") != type) continue;
    if (it->value("status", "") == value) since = it->value("lastTransitionTime", since);
    conds.erase(it);
    break;
  }
  Json c = {{"type", type}, {"status", value}, {"lastTransitionTime", since}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  if (type == "Ready" || type == "ContainersReady") c["lastProbeTime"] = nullptr;
  conds.push_back(c);
  status["conditions"] = conds;
}

// The node's pods that have not ended, as copies to edit.
Result<std::vector<Json>> PodsOn(client::Client& client, const std::string& node) {
  ASSIGN_OR_RETURN(api::ObjectList listed, client::PodsOnNode(client, node));
  std::vector<Json> out;
  for (const Json& pod : listed) {
    if (!api::IsPodTerminal(pod)) out.push_back(pod);
  }
  return out;
}

// Writes pod's status after edit(status); retries a conflict once with a fresh read.
Status EditPodStatus(client::Client& client, Json pod, const std::function<void(Json&)>& edit) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    Json status = pod.value("status", Json::object());
    edit(status);
    pod["status"] = status;
    auto written = client.Update(api::Pods(), pod["metadata"].value("namespace", ""), pod,
                                 api::Subresource::kStatus);
    if (written.ok() || written.status().code() != Code::kConflict) return written.status();
    auto fresh = client.Get(api::Pods(), pod["metadata"].value("namespace", ""),
                            pod["metadata"].value("name", ""));
    if (!fresh.ok()) return fresh.status();
    pod = *fresh;
  }
  return Status(Code::kConflict, "pod status kept changing");
}

}  // namespace

Result<std::vector<std::string>> MarkNodeUnreachable(client::Client& client,
                                                     const std::string& node, Time now) {
  ASSIGN_OR_RETURN(Json n, client.Get(api::Nodes(), "", node));
  Json status = n.value("status", Json::object());
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    SetCondition(status, type, "Unknown", "NodeStatusUnknown",
                 "Kubelet stopped posting node status.", now);
  }
  n["status"] = status;
  ASSIGN_OR_RETURN(n, client.Update(api::Nodes(), "", n, api::Subresource::kStatus));
  Json taints = Json::array();
  for (const Json& t : n.value("spec", Json::object()).value("taints", Json::array())) {
    if (t.value("key", "") != "node.kubernetes.io/unreachable") taints.push_back(t);
  }
  for (const char* effect : {"NoSchedule", "NoExecute"}) {
    Json t = {{"key", "node.kubernetes.io/unreachable"}, {"effect", effect}};
    if (std::string(effect) == "NoExecute") t["timeAdded"] = FormatTime(now);
    taints.push_back(t);
  }
  n["spec"]["taints"] = taints;
  RETURN_IF_ERROR(client.Update(api::Nodes(), "", n).status());
  const Json involved = {{"kind", "Node"}, {"name", node}, {"uid", node}};
  (void)client.Create(
      api::Events(), "default",
      api::MakeEvent(involved, "Normal", "NodeNotReady",
                     "Node " + node + " status is now: NodeNotReady", kNodeController, now));
  std::vector<std::string> marked;
  ASSIGN_OR_RETURN(std::vector<Json> pods, PodsOn(client, node));
  for (const Json& pod : pods) {
    Status s = EditPodStatus(client, pod,
                             [now](Json& st) { SetCondition(st, "Ready", "False", "", "", now); });
    if (s.ok()) marked.push_back(Key(pod));
    const Json ref = api::ObjectReferenceOf(pod);
    (void)client.Create(
        api::Events(), pod["metadata"].value("namespace", ""),
        api::MakeEvent(ref, "Warning", "NodeNotReady", "Node is not ready", kNodeController, now));
  }
  return marked;
}

Result<std::vector<std::string>> EvictPodsOfLostNode(client::Client& client,
                                                     const std::string& node, Time now) {
  ASSIGN_OR_RETURN(std::vector<Json> pods, PodsOn(client, node));
  std::vector<std::string> evicted;
  for (const Json& pod : pods) {
    const std::string ns = pod["metadata"].value("namespace", "");
    const std::string name = pod["metadata"].value("name", "");
    // Taint manager: the DisruptionTarget condition, an event, a graceful deletion.
    RETURN_IF_ERROR(EditPodStatus(client, pod, [now](Json& st) {
      SetCondition(st, "DisruptionTarget", "True", "DeletionByTaintManager",
                   "Taint manager: deleting due to NoExecute taint", now);
    }));
    (void)client.Create(
        api::Events(), ns,
        api::MakeEvent(api::ObjectReferenceOf(pod), "Normal", "TaintManagerEviction",
                       "Marking for deletion Pod " + ns + "/" + name,
                       {"taint-eviction-controller", ""}, now));
    RETURN_IF_ERROR(client.Delete(api::Pods(), ns, name).status());
    // Pod GC (gcTerminating, node out of service): no kubelet confirms the deletion; phase
    // Failed, then a forced deletion.
    auto current = client.Get(api::Pods(), ns, name);
    if (current.ok()) {
      RETURN_IF_ERROR(EditPodStatus(client, *current, [](Json& st) { st["phase"] = "Failed"; }));
      api::DeleteOptions force;
      force.grace_period_seconds = 0;
      Status s = client.Delete(api::Pods(), ns, name, force).status();
      if (!s.ok() && s.code() != Code::kNotFound) return s;
    }
    evicted.push_back(ns + "/" + name);
  }
  return evicted;
}

}  // namespace pjemu::faults
