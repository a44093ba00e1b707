#include "emulator/scheduler/scheduler.h"

#include <algorithm>
#include <set>

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"
#include "emulator/api/pod_status.h"
#include "emulator/api/podgroup.h"
#include "emulator/scheduler/fit.h"

namespace pjemu::scheduler {
namespace {

std::string Key(const Json& pod) {
  return pod["metadata"].value("namespace", "") + "/" + pod["metadata"].value("name", "");
}

using api::Field;

// The pod's conditions with `cond` replacing the one of the same type.
Json WithCondition(const Json& pod, const Json& cond) {
  Json conditions = Json::array();
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"status", "conditions"}))) {
    if (c.value("type", "") != cond.value("type", "")) conditions.push_back(c);
  }
  conditions.push_back(cond);
  return conditions;
}

// What is read of a pod bound to a node (CachedPod::pod): the inter-pod filters' namespace,
// labels and anti-affinity terms, the gang counts' phase and node.
Json BoundView(const Json& pod) {
  return api::Projection(pod, {{"metadata", "name"},
                               {"metadata", "namespace"},
                               {"metadata", "uid"},
                               {"metadata", "labels"},
                               {"spec", "nodeName"},
                               {"spec", "affinity", "podAntiAffinity"},
                               {"status", "phase"}});
}

}  // namespace

Scheduler::Scheduler(client::Client& client, EventLoop& loop, SchedulerOptions options)
    : client_(client),
      loop_(loop),
      options_(std::move(options)),
      pods_(client, loop, api::Pods(), client::InformerOptions::Named("scheduler pods"),
            [this](const api::WatchEvent& event) { OnPod(event); }),
      nodes_(client, loop, api::Nodes(), client::InformerOptions::Named("scheduler nodes"),
             [this](const api::WatchEvent&) { OnNode(); }),
      claims_(client, loop, api::PersistentVolumeClaims(),
              client::InformerOptions::Named("scheduler claims"),
              [this](const api::WatchEvent& event) { OnClaim(event); }) {}

Scheduler::~Scheduler() { Stop(); }

Status Scheduler::Start() {
  if (alive_) return Status::Ok();
  alive_ = std::make_shared<bool>(true);
  for (client::Informer* informer : {&pods_, &nodes_, &claims_}) {
    if (Status s = informer->Start(); !s.ok()) {
      Stop();
      return s.WithContext("scheduler");
    }
  }
  Trigger();
  return Status::Ok();
}

void Scheduler::Stop() {
  if (!alive_) return;
  alive_.reset();
  pods_.Stop();
  nodes_.Stop();
  claims_.Stop();
  if (retry_) loop_.Cancel(retry_), retry_ = 0;
}

void Scheduler::OnPod(const api::WatchEvent& event) {
  if (event.type == api::WatchEvent::Type::kDeleted) {
    Forget(Field(event.object(), "metadata").value("uid", ""));
  } else {
    Upsert(event.shared_object());
  }
  if (!in_pass_) Trigger();  // a pass sees the events it drains itself
}

void Scheduler::OnNode() {
  retry_unschedulable_ = true;
  Trigger();
}

void Scheduler::OnClaim(const api::WatchEvent& event) {
  const std::string key = Key(event.object());
  if (event.type == api::WatchEvent::Type::kDeleted) {
    claim_cache_.erase(key);
  } else {
    claim_cache_[key] = event.object();
  }
  retry_unschedulable_ = true;
  if (!in_pass_) Trigger();
}

std::vector<ClaimView> Scheduler::ClaimsOf(const Json& pod) {
  std::vector<ClaimView> views;
  const std::string ns = pod["metadata"].value("namespace", "");
  for (const std::string& name : PodClaimNames(pod)) {
    auto it = claim_cache_.find(ns + "/" + name);
    const Json none;
    const Json& claim = it == claim_cache_.end() ? none : it->second;
    Json storage_class, volume;
    const Json& spec = Field(claim, "spec");
    if (const std::string pv = api::Str(spec, "volumeName"); !pv.empty()) {
      auto got = client_.Get(api::PersistentVolumes(), "", pv);
      if (got.ok()) volume = std::move(*got);
    } else if (const Json& cls = Field(spec, "storageClassName"); cls.is_string()) {
      auto got = client_.Get(api::StorageClasses(), "", cls.get<std::string>());
      if (got.ok()) storage_class = std::move(*got);
    } else if (claim.is_object()) {
      // No class yet: the default class's, which the volume controller is about to write.
      auto list = client_.List(api::StorageClasses(), "");
      std::vector<const Json*> classes;
      if (list.ok()) {
        for (const Json& sc : api::ArrayOr(api::Field(*list, "items"))) classes.push_back(&sc);
      }
      if (const Json* sc = api::FindDefaultStorageClass(classes)) storage_class = *sc;
    }
    views.push_back(ViewOfClaim(name, claim, storage_class, volume));
  }
  return views;
}

bool Scheduler::AwaitVolumes(const Json& pod, const std::vector<ClaimView>& claims,
                             const std::string& node) {
  bool waiting = false;
  const std::string ns = pod["metadata"].value("namespace", "");
  for (const ClaimView& c : claims) {
    if (c.bound) continue;
    waiting = true;
    if (!c.wait_for_first_consumer || c.selected_node == node) continue;
    Json patch = {{"metadata", {{"annotations", {{api::kSelectedNodeAnnotation, node}}}}}};
    (void)client_.Patch(api::PersistentVolumeClaims(), ns, c.name, api::PatchType::kMerge, patch);
  }
  return waiting;
}

void Scheduler::Count(const CachedPod& entry, int sign) {
  if (!entry.counted) return;
  if (sign < 0) retry_unschedulable_ = true;  // Upsert undoes this when it counts the same again
  api::ResourceList& used = used_[entry.node];
  for (const auto& [k, amount] : entry.requests) used[k] += sign * amount;
  used["pods"] += sign;
}

void Scheduler::Upsert(std::shared_ptr<const Json> snapshot) {
  const Json& pod = *snapshot;
  const Json& meta = pod["metadata"];
  const std::string uid = meta.value("uid", "");
  const std::int64_t generation = meta.value("generation", std::int64_t{0});
  auto it = pods_by_uid_.find(uid);
  bool was_counted = false, retry_before = retry_unschedulable_;
  bool same_spec = false;
  std::string old_node;
  if (it != pods_by_uid_.end()) {
    was_counted = it->second.counted;
    old_node = it->second.node;
    same_spec = generation != 0 && it->second.generation == generation;
    Count(it->second, -1);
    pending_.erase(it->second.order);
  } else {
    it = pods_by_uid_.emplace(uid, CachedPod{}).first;
  }
  CachedPod& entry = it->second;
  entry.pod = std::move(snapshot);  // `pod` stays valid: the snapshot is only moved
  const Json& spec = Field(pod, "spec");
  entry.node = spec.is_object() ? spec.value("nodeName", "") : "";
  const bool same_requests = same_spec || Reread(entry, pod, generation);
  entry.counted = !entry.node.empty() && !api::IsPodTerminal(pod);
  Count(entry, +1);
  if (was_counted && entry.counted && entry.node == old_node && same_requests) {
    retry_unschedulable_ = retry_before;  // the same room taken as before: none was made
  }
  if (!entry.group.empty()) dirty_gangs_.insert(entry.group);
  entry.group.clear();
  if (auto ref = api::PodGroupOf(pod)) {
    entry.group = GangKey(ref->type->group, meta.value("namespace", ""), ref->name);
    gang_members_[entry.group].insert(uid);
    dirty_gangs_.insert(entry.group);
  }
  const std::string scheduler = spec.is_object() ? spec.value("schedulerName", "") : "";
  const auto& gangs = options_.gang_scheduler_names;
  entry.gang = !entry.group.empty() &&
               std::find(gangs.begin(), gangs.end(), scheduler) != gangs.end();
  if (entry.node.empty()) {
    std::string name = scheduler;
    bool ours = name.empty() || name == options_.scheduler_name || entry.gang;
    if (ours && !meta.contains("deletionTimestamp") && !api::IsPodTerminal(pod))
      pending_[entry.order] = uid;
  } else {
    entry.pod = std::make_shared<const Json>(BoundView(pod));  // `pod` is not read after this
  }
}

bool Scheduler::Reread(CachedPod& entry, const Json& pod, std::int64_t generation) {
  entry.generation = generation;
  entry.order = Field(pod, "metadata").value("creationTimestamp", "") + '\n' + Key(pod);
  auto req = api::PodRequests(pod);
  api::ResourceList requests = req.ok() ? *req : api::ResourceList{};
  const bool same = requests == entry.requests;
  entry.requests = std::move(requests);
  entry.request_error = req.ok() ? "" : std::string(req.status().message());
  if (entry.placement_terms) --with_placement_terms_;
  entry.anti_affinity = NodeView::HasRequiredAntiAffinity(pod);
  entry.placement_terms = NodeView::HasPlacementTerms(pod);
  if (entry.placement_terms) ++with_placement_terms_;
  return same;
}

void Scheduler::Forget(const std::string& uid) {
  auto it = pods_by_uid_.find(uid);
  if (it == pods_by_uid_.end()) return;
  Count(it->second, -1);
  if (it->second.placement_terms) --with_placement_terms_;
  pending_.erase(it->second.order);
  if (const std::string& g = it->second.group; !g.empty()) {
    gang_members_[g].erase(uid);
    dirty_gangs_.insert(g);
    if (gang_members_[g].empty()) gang_members_.erase(g);
  }
  pods_by_uid_.erase(it);
  last_message_.erase(uid);
}

void Scheduler::Trigger() {
  if (pass_pending_) return;
  pass_pending_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    if (alive.expired()) return;
    pass_pending_ = false;
    ScheduleAll();
  });
}

void Scheduler::ScheduleAll() {
  in_pass_ = true;
  pods_.Drain();  // the cache must include this loop's own earlier bindings
  claims_.Drain();
  in_pass_ = false;
  if (pending_.empty() && dirty_gangs_.empty()) {
    // No pod to place (nor one held unschedulable) and no group to report: all a pass would do
    // is what follows, without reading the nodes.
    retry_unschedulable_ = false;
    if (retry_) loop_.Cancel(retry_), retry_ = 0;
    return;
  }
  auto node_list = client_.ListObjects(api::Nodes(), "");  // read in place, once per pass
  if (!node_list.ok()) return;
  std::vector<NodeView> nodes;
  std::map<std::string, std::size_t> node_index;
  for (const Json& n : *node_list) {
    nodes.push_back(ViewOfNode(n));
    node_index[nodes.back().name] = nodes.size() - 1;
    auto used = used_.find(nodes.back().name);
    if (used != used_.end()) nodes.back().used = used->second;
  }
  if (with_placement_terms_ > 0) {
    for (const auto& [uid, cached] : pods_by_uid_) {
      auto at = cached.counted ? node_index.find(cached.node) : node_index.end();
      if (at != node_index.end()) nodes[at->second].AddPod(cached.pod.get(), cached.anti_affinity);
    }
  }
  // FIFO by creation time, then namespace/name: deterministic. The cache is not touched
  // during the pass (its own writes arrive on the watch, drained by the next pass), so the
  // pods are read in place, not copied.
  const bool retry_all = retry_unschedulable_;
  retry_unschedulable_ = false;
  bool unschedulable = false;
  std::set<std::string> gangs_tried;
  for (const auto& [order, uid] : pending_) {
    CachedPod& entry = pods_by_uid_.at(uid);
    if (entry.gang) {  // the whole group, at its first pending pod's place in the queue
      if (gangs_tried.insert(entry.group).second) unschedulable |= ScheduleGang(entry.group, nodes);
      continue;
    }
    if (entry.unschedulable && !retry_all) {
      unschedulable = true;
      continue;
    }
    const Json& pod = *entry.pod;
    std::string message;
    std::optional<std::size_t> chosen;
    std::vector<ClaimView> claims = ClaimsOf(pod);
    if (!entry.request_error.empty()) {
      message = entry.request_error;
    } else {
      chosen = ChooseNode(pod, entry.requests, nodes, &message, claims);
    }
    if (!chosen) {
      unschedulable = entry.unschedulable = true;
      MarkUnschedulable(pod, message);
      continue;
    }
    if (AwaitVolumes(pod, claims, nodes[*chosen].name)) {
      // PreBind waits for the claims: tried again when one changes (or on the retry), its room
      // held for the rest of this pass.
      unschedulable = entry.unschedulable = true;
      for (const auto& [k, amount] : entry.requests) nodes[*chosen].used[k] += amount;
      nodes[*chosen].used["pods"] += 1;
      continue;
    }
    if (!Bind(pod, nodes[*chosen].name).ok()) {  // (gang.cc binds groups the same way)
      unschedulable = true;  // a failed write (API error): not flagged, tried on the next pass
      continue;
    }
    entry.unschedulable = false;
    for (const auto& [k, amount] : entry.requests) nodes[*chosen].used[k] += amount;
    nodes[*chosen].used["pods"] += 1;
    nodes[*chosen].AddPod(entry.pod.get(), entry.anti_affinity);
  }
  UpdatePodGroups();
  // The periodic retry is armed once and left to run (not pushed back by every pass): pods
  // that are skipped above are still tried at least every retry_interval.
  if (!unschedulable && retry_) loop_.Cancel(retry_), retry_ = 0;
  if (unschedulable && !retry_) {
    std::weak_ptr<bool> alive = alive_;
    retry_ = loop_.PostAfter(options_.retry_interval, [this, alive] {
      if (alive.expired()) return;
      retry_ = 0;
      retry_unschedulable_ = true;
      ScheduleAll();
    });
  }
}

Status Scheduler::Bind(const Json& pod, const std::string& node) {
  const std::string ns = pod["metadata"].value("namespace", "");
  const std::string name = pod["metadata"].value("name", "");
  api::PodBinding binding;
  binding.node = node;
  binding.uid = pod["metadata"].value("uid", "");
  RETURN_IF_ERROR(client_.Bind(ns, name, binding));
  last_message_.erase(pod["metadata"].value("uid", ""));
  Event(pod, "Normal", "Scheduled", "Successfully assigned " + ns + "/" + name + " to " + node);
  return Status::Ok();
}

void Scheduler::MarkUnschedulable(const Json& pod, const std::string& message) {
  std::string uid = pod["metadata"].value("uid", "");
  auto it = last_message_.find(uid);
  if (it != last_message_.end() && it->second == message) return;  // nothing new to say
  last_message_[uid] = message;
  Json cond = {{"type", "PodScheduled"},    {"status", "False"},
               {"lastProbeTime", nullptr},  {"lastTransitionTime", FormatTime(loop_.Now())},
               {"reason", "Unschedulable"}, {"message", message}};
  Json patch = {{"status", {{"phase", "Pending"}, {"conditions", WithCondition(pod, cond)}}}};
  (void)client_.Patch(api::Pods(), pod["metadata"].value("namespace", ""),
                      pod["metadata"].value("name", ""), api::PatchType::kMerge, patch,
                      api::Subresource::kStatus);
  Event(pod, "Warning", "FailedScheduling", message);
}

void Scheduler::Event(const Json& pod, const std::string& type, const std::string& reason,
                      const std::string& message) {
  const std::string ns = pod["metadata"].value("namespace", "");
  std::string source = api::Str(api::Field(pod, "spec"), "schedulerName");
  if (source.empty()) source = options_.scheduler_name;
  (void)client_.CreateShared(api::Events(), ns,
                             api::MakeEvent(api::ObjectReferenceOf(pod), type, reason, message,
                                            {source, ""}, loop_.Now()));
}

}  // namespace pjemu::scheduler
