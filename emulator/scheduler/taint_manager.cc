#include "emulator/scheduler/taint_manager.h"

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/api/taints.h"
#include "emulator/client/workloads.h"

namespace pjemu::scheduler {
namespace {

// The node's NoExecute taints, less the node lifecycle's own.
Json EvictingTaints(const Json& node) {
  Json out = Json::array();
  for (const Json& t : api::ArrayOr(api::FieldAt(node, {"spec", "taints"}))) {
    const std::string key = api::Str(t, "key");
    if (api::Str(t, "effect") != api::kNoExecute) continue;
    if (key == "node.kubernetes.io/unreachable" || key == "node.kubernetes.io/not-ready") continue;
    out.push_back(t);
  }
  return out;
}

std::string PodKey(const Json& pod) {
  return api::Str(api::Field(pod, "metadata"), "namespace") + "/" +
         api::Str(api::Field(pod, "metadata"), "name");
}

// What Pass reads of a pod: its node, tolerations, phase, deletion and identity.
Json TaintView(const Json& pod) {
  return api::Projection(pod, {{"apiVersion"},
                               {"kind"},
                               {"metadata", "name"},
                               {"metadata", "namespace"},
                               {"metadata", "uid"},
                               {"metadata", "resourceVersion"},
                               {"metadata", "deletionTimestamp"},
                               {"spec", "nodeName"},
                               {"spec", "tolerations"},
                               {"status", "phase"}});
}

// What Pass asks first of every pod: bound, not ended and not being deleted. Only such a pod
// (or one with an eviction pending, whose cancelling event names it) is kept.
bool MayBeEvicted(const Json& pod) {
  return !api::Str(api::Field(pod, "spec"), "nodeName").empty() && !api::IsPodTerminal(pod) &&
         !api::FieldAt(pod, {"metadata", "deletionTimestamp"}).is_string();
}

}  // namespace

TaintManager::TaintManager(client::Client& client, EventLoop& loop)
    : client_(client),
      loop_(loop),
      node_informer_(client, loop, api::Nodes(),
                     client::InformerOptions::Named("taint manager nodes"),
                     [this](const api::WatchEvent& e) {
                       const std::string name = api::Str(api::Field(e.object(), "metadata"), "name");
                       Json taints = e.type == api::WatchEvent::Type::kDeleted
                                         ? Json::array()
                                         : EvictingTaints(e.object());
                       if (taints.empty()) {
                         nodes_.erase(name);
                       } else if (auto it = nodes_.find(name); it == nodes_.end()) {
                         nodes_[name] = std::move(taints);
                         AddPodsOn(name);
                       } else {
                         it->second = std::move(taints);
                       }
                       Trigger();
                     }),
      pod_informer_(client, loop, api::Pods(), client::InformerOptions::Named("taint manager pods"),
                    [this](const api::WatchEvent& e) {
                      const Json& pod = e.object();
                      const std::string uid = api::Str(api::Field(pod, "metadata"), "uid");
                      const bool pending = timers_.count(uid) > 0;
                      if (e.type != api::WatchEvent::Type::kDeleted &&
                          (pending || (MayBeEvicted(pod) && OnTaintedNode(pod)))) {
                        pods_[uid] = TaintView(pod);
                      } else {
                        pods_.erase(uid);
                      }
                      if (!nodes_.empty() || !timers_.empty()) Trigger();
                    }) {}

TaintManager::~TaintManager() { Stop(); }

bool TaintManager::OnTaintedNode(const Json& pod) const {
  return nodes_.count(api::Str(api::Field(pod, "spec"), "nodeName")) > 0;
}

void TaintManager::AddPodsOn(const std::string& node) {
  auto listed = client::PodsOnNode(client_, node);
  if (!listed.ok()) return;  // the pods' own events add them as they change
  for (const Json& pod : *listed) {
    if (MayBeEvicted(pod)) pods_[api::Str(api::Field(pod, "metadata"), "uid")] = TaintView(pod);
  }
}

Status TaintManager::Start() {
  if (alive_) return Status::Ok();
  alive_ = std::make_shared<bool>(true);
  for (client::Informer* i : {&node_informer_, &pod_informer_}) {
    if (Status s = i->Start(); !s.ok()) {
      Stop();
      return s.WithContext("taint manager");
    }
  }
  return Status::Ok();
}

void TaintManager::Stop() {
  if (!alive_) return;
  alive_.reset();
  node_informer_.Stop();
  pod_informer_.Stop();
  for (auto& [uid, timer] : timers_) loop_.Cancel(timer);
  timers_.clear();
}

void TaintManager::Trigger() {
  if (pass_pending_ || !alive_) return;
  pass_pending_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    if (alive.expired()) return;
    pass_pending_ = false;
    Pass();
  });
}

void TaintManager::Pass() {
  std::map<std::string, EventLoop::TimerId> keep;
  for (const auto& entry : pods_) {
    // By name, not a structured binding: clang 14 cannot capture one in the lambda below.
    const std::string& uid = entry.first;
    const Json& pod = entry.second;
    auto tainted = nodes_.find(api::Str(api::Field(pod, "spec"), "nodeName"));
    if (tainted == nodes_.end() || !MayBeEvicted(pod)) continue;
    auto delay = api::NoExecuteEvictionDelay(api::TaintsOf({{"spec", {{"taints", tainted->second}}}}),
                                             api::TolerationsOf(pod));
    if (!delay) continue;
    if (*delay == 0) {
      Evict(pod);
      continue;
    }
    auto timer = timers_.find(uid);
    if (timer != timers_.end()) {
      keep[uid] = timer->second;
      continue;
    }
    std::weak_ptr<bool> alive = alive_;
    keep[uid] = loop_.PostAfter(std::chrono::seconds(*delay), [this, alive, uid] {
      if (alive.expired()) return;
      timers_.erase(uid);
      auto it = pods_.find(uid);
      if (it != pods_.end()) Evict(it->second);
    });
  }
  // Evictions no longer called for: cancelled.
  for (auto& [uid, timer] : timers_) {
    if (keep.count(uid)) continue;
    loop_.Cancel(timer);
    auto it = pods_.find(uid);
    if (it == pods_.end()) continue;
    (void)client_.Create(
        api::Events(), api::Str(api::Field(it->second, "metadata"), "namespace"),
        api::MakeEvent(api::ObjectReferenceOf(it->second), "Normal", "TaintManagerEviction",
                       "Cancelling deletion of Pod " + PodKey(it->second),
                       {"taint-eviction-controller", ""}, loop_.Now()));
  }
  timers_ = std::move(keep);
}

void TaintManager::Evict(const Json& cached) {
  const std::string ns = api::Str(api::Field(cached, "metadata"), "namespace");
  const std::string name = api::Str(api::Field(cached, "metadata"), "name");
  auto current = client_.Get(api::Pods(), ns, name);
  if (!current.ok() ||
      api::FieldAt(*current, {"metadata", "uid"}) != api::FieldAt(cached, {"metadata", "uid"})) {
    return;  // gone (or another pod of the name): nothing to evict
  }
  const Json& pod = *current;
  Json conditions = Json::array();
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"status", "conditions"}))) {
    if (api::Str(c, "type") != "DisruptionTarget") conditions.push_back(c);
  }
  conditions.push_back({{"type", "DisruptionTarget"},
                        {"status", "True"},
                        {"reason", "DeletionByTaintManager"},
                        {"message", "Taint manager: deleting due to NoExecute taint"},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", FormatTime(loop_.Now())}});
  (void)client_.Patch(api::Pods(), ns, name, api::PatchType::kMerge,
                      {{"status", {{"conditions", conditions}}}}, api::Subresource::kStatus);
  (void)client_.Create(api::Events(), ns,
                       api::MakeEvent(api::ObjectReferenceOf(pod), "Normal", "TaintManagerEviction",
                                      "Marking for deletion Pod " + ns + "/" + name,
                                      {"taint-eviction-controller", ""}, loop_.Now()));
  (void)client_.Delete(api::Pods(), ns, name);
}

}  // namespace pjemu::scheduler
