#include "emulator/ui/workloads.h"

#include <algorithm>
#include <map>
#include <vector>

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/pod_status.h"
#include "emulator/api/workload.h"

namespace pjemu::ui {
namespace {

using api::Field, api::FieldAt, api::Str;

// The uid named by the object's controller ownerReference, "" when none.
std::string ControllerUid(const Json& object) {
  for (const Json& ref : api::ArrayOr(Field(Field(object, "metadata"), "ownerReferences"))) {
    if (Field(ref, "controller") == Json(true)) return Str(ref, "uid");
  }
  return "";
}

// Every object of the namespace that has a controller, by that controller's uid.
std::map<std::string, std::vector<Json>> ByController(const store::Store& store,
                                                      const std::string& ns) {
  std::map<std::string, std::vector<Json>> out;
  for (const api::ResourceType& type : api::AllResources()) {
    if (!type.namespaced || type == api::Events()) continue;
    Result<Json> list = store.List(type, ns);
    if (!list.ok()) continue;
    for (Json& item : (*list)["items"]) {
      const std::string owner = ControllerUid(item);
      if (owner.empty()) continue;
      item["apiVersion"] = type.ApiVersion();
      item["kind"] = type.kind;
      out[owner].push_back(std::move(item));
    }
  }
  for (auto& [uid, items] : out) {
    std::sort(items.begin(), items.end(), [](const Json& a, const Json& b) {
      return std::make_pair(Str(a, "kind"), Str(Field(a, "metadata"), "name")) <
             std::make_pair(Str(b, "kind"), Str(Field(b, "metadata"), "name"));
    });
  }
  return out;
}

Json Node(const Json& object, const std::map<std::string, std::vector<Json>>& owned, int depth) {
  const Json& meta = Field(object, "metadata");
  Json node = {{"kind", Str(object, "kind")},
               {"apiVersion", Str(object, "apiVersion")},
               {"name", Str(meta, "name")},
               {"uid", Str(meta, "uid")},
               {"object", object},
               {"children", Json::array()}};
  if (api::WorkloadTypeOf(object) != nullptr) {
    node["state"] = api::StateOf(object).state;
  } else if (Str(object, "kind") == api::Pods().kind) {
    node["phase"] = api::PodStatusText(object);
  }
  auto it = owned.find(Str(meta, "uid"));
  if (depth <= 1 || it == owned.end()) return node;
  for (const Json& child : it->second) node["children"].push_back(Node(child, owned, depth - 1));
  return node;
}

// Every stored object of `type` ("" every namespace); none when the store cannot list it.
std::vector<Json> ListAll(const store::Store& store, const api::ResourceType& type,
                          const std::string& ns) {
  Result<Json> list = store.List(type, ns);
  return list.ok() ? api::ArrayOr(Field(*list, "items")).get<std::vector<Json>>() : std::vector<Json>{};
}

}  // namespace

Json QueueInfo(const store::Store& store, const Json& job) {
  namespace ak = api::kueue;
  const Json& meta = Field(job, "metadata");
  const std::string queue = Str(Field(meta, "labels"), ak::kQueueNameLabel);
  if (queue.empty()) return Json();
  Json info = {{"localQueue", queue}, {"state", "NoWorkload"}};
  std::map<std::string, Json> local_queues;
  for (Json& lq : ListAll(store, ak::LocalQueues(), "")) {
    std::string key = api::ObjectKey(lq);  // before the move: the right side goes first
    local_queues[std::move(key)] = std::move(lq);
  }
  const std::vector<Json> workloads = ListAll(store, ak::Workloads(), "");
  const Json* own = nullptr;
  for (const Json& wl : workloads) {
    if (Str(FieldAt(wl, {"metadata", "labels"}), ak::kJobUidLabel) == Str(meta, "uid")) own = &wl;
  }
  if (own == nullptr) return info;
  const std::string cq = ak::ClusterQueueOf(*own, local_queues);
  info["workload"] = Str(Field(*own, "metadata"), "name");
  info["clusterQueue"] = cq;
  info["conditions"] = api::ArrayOr(FieldAt(*own, {"status", "conditions"}));
  info["admission"] = FieldAt(*own, {"status", "admission"});
  const Json* reserved = ak::Condition(*own, ak::kQuotaReserved);
  info["message"] = reserved ? Str(*reserved, "message") : "";
  if (ak::IsTrue(*own, ak::kFinished)) {
    info["state"] = "Finished";
  } else if (ak::IsTrue(*own, ak::kEvicted)) {
    info["state"] = "Evicted";
  } else if (ak::IsTrue(*own, ak::kAdmitted)) {
    info["state"] = "Admitted";
  } else if (ak::IsPending(*own)) {
    // Its place among the ClusterQueue's pending Workloads, in Kueue's order.
    std::vector<const Json*> pending;
    for (const Json& wl : workloads) {
      if (ak::IsPending(wl) && ak::ClusterQueueOf(wl, local_queues) == cq) pending.push_back(&wl);
    }
    std::sort(pending.begin(), pending.end(),
              [](const Json* a, const Json* b) { return ak::QueueOrderBefore(*a, *b); });
    const auto at = std::find(pending.begin(), pending.end(), own) - pending.begin();
    info["state"] = "Pending";
    info["position"] = at + 1;
    info["pending"] = pending.size();
  }
  return info;
}

Json WorkloadTable(const store::Store& store) {
  Json kinds = Json::array();
  Json items = Json::array();
  for (const api::ResourceType* type : api::WorkloadTypes()) {
    kinds.push_back({{"kind", type->kind},
                     {"apiVersion", type->ApiVersion()},
                     {"plural", type->plural},
                     {"namespaced", type->namespaced}});
    Result<Json> list = store.List(*type, "");
    if (!list.ok()) continue;
    for (const Json& job : api::ArrayOr(Field(*list, "items"))) {
      const Json& meta = Field(job, "metadata");
      const api::WorkloadState state = api::StateOf(*type, job);
      items.push_back({{"kind", type->kind},
                       {"apiVersion", type->ApiVersion()},
                       {"plural", type->plural},
                       {"namespace", Str(meta, "namespace")},
                       {"name", Str(meta, "name")},
                       {"uid", Str(meta, "uid")},
                       {"created", Str(meta, "creationTimestamp")},
                       {"state", state.state},
                       {"reason", state.reason},
                       {"message", state.message},
                       {"finished", state.finished},
                       {"succeeded", state.succeeded},
                       {"podSelector", type->workload->pod_selector(job)},
                       {"queue", Str(FieldAt(job, {"metadata", "labels"}), api::kueue::kQueueNameLabel)},
                       {"object", job}});
    }
  }
  return {{"kinds", std::move(kinds)}, {"items", std::move(items)}};
}

Result<Json> OwnerTree(const store::Store& store, const api::ResourceType& type,
                       const std::string& ns, const std::string& name, int max_depth) {
  ASSIGN_OR_RETURN(Json root, store.Get(type, ns, name));
  root["apiVersion"] = type.ApiVersion();
  root["kind"] = type.kind;
  Json tree = Node(root, ByController(store, ns), max_depth);
  if (Json queue = QueueInfo(store, root); !queue.is_null()) tree["queue"] = std::move(queue);
  return tree;
}

}  // namespace pjemu::ui
