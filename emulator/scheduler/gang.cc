// Gang scheduling (scheduler.h): scheduler-plugins' coscheduling (PreFilter's sibling count,
// Permit's all-or-nothing with its timeout) for both PodGroup kinds, and the groups' status.
#include <algorithm>

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/scheduler/scheduler.h"

namespace pjemu::scheduler {
namespace {

struct GangId {
  const api::ResourceType* type = nullptr;
  std::string ns, name;
};

GangId ParseKey(const std::string& key) {
  const auto a = key.find('/'), b = key.find('/', a + 1);
  const std::string group = key.substr(0, a);
  GangId id{group == "scheduling.volcano.sh" ? &api::VolcanoPodGroups()
                                              : &api::SchedulerPluginsPodGroups(),
            key.substr(a + 1, b - a - 1), key.substr(b + 1)};
  return id;
}

// kube-scheduler's text for a PreFilter rejection that preemption cannot help.
std::string PreFilterMessage(std::size_t nodes, const std::string& text) {
  const std::string n = std::to_string(nodes);
  return "0/" + n + " nodes are available: " + text + ". preemption: 0/" + n +
         " nodes are available: " + n + " Preemption is not helpful for scheduling.";
}

// Volcano's gang message: `<n>/<total> tasks in gang unschedulable: pod group is not ready,
// <count status, ...>` with the entries sorted as strings.
std::string VolcanoGangMessage(int waiting, int total, int min) {
  std::vector<std::string> entries = {std::to_string(waiting) + " Pending",
                                      std::to_string(min) + " minAvailable"};
  std::sort(entries.begin(), entries.end());
  return std::to_string(waiting) + "/" + std::to_string(total) +
         " tasks in gang unschedulable: pod group is not ready, " + entries[0] + ", " + entries[1];
}

}  // namespace

std::string Scheduler::GangKey(const std::string& group, const std::string& ns,
                               const std::string& name) {
  return group + "/" + ns + "/" + name;
}

void Scheduler::Place(const CachedPod& entry, NodeView& node) {
  for (const auto& [k, amount] : entry.requests) node.used[k] += amount;
  node.used["pods"] += 1;
  node.AddPod(entry.pod.get(), entry.anti_affinity);
}

bool Scheduler::ScheduleGang(const std::string& key, std::vector<NodeView>& nodes) {
  const GangId id = ParseKey(key);
  std::vector<CachedPod*> pending;
  int bound = 0, total = 0;
  for (const std::string& uid : gang_members_[key]) {
    CachedPod& p = pods_by_uid_.at(uid);
    ++total;
    if (p.counted) ++bound;
    if (p.gang && p.node.empty() && pending_.count(p.order)) pending.push_back(&p);
  }
  std::sort(pending.begin(), pending.end(),
            [](const CachedPod* a, const CachedPod* b) { return a->order < b->order; });
  dirty_gangs_.insert(key);
  auto group = client_.Get(*id.type, id.ns, id.name);
  if (!group.ok()) {
    for (CachedPod* p : pending) MarkUnschedulable(*p->pod, "PodGroup not found");
    gang_reason_.erase(key);
    return true;
  }
  const int min = api::MinMember(*group);
  // PreFilter: every sibling must exist before any is placed.
  if (total < min) {
    for (CachedPod* p : pending) {
      MarkUnschedulable(*p->pod,
                        PreFilterMessage(nodes.size(),
                                         "pre-filter pod " + p->pod->at("metadata").value("name", "") +
                                             " cannot find enough sibling pods, current pods number: " +
                                             std::to_string(total) +
                                             ", minMember of group: " + std::to_string(min)));
    }
    gang_reason_[key] = VolcanoGangMessage(static_cast<int>(pending.size()), total, min);
    return true;
  }
  // Filter and reserve each pending pod on a copy of the nodes.
  std::vector<NodeView> trial = nodes;
  std::vector<std::pair<CachedPod*, std::size_t>> fits;
  std::vector<std::pair<CachedPod*, std::string>> unfit;
  for (CachedPod* p : pending) {
    std::string message;
    std::optional<std::size_t> chosen;
    if (p->request_error.empty()) {
      chosen = ChooseNode(*p->pod, p->requests, trial, &message, ClaimsOf(*p->pod));
    } else {
      message = p->request_error;
    }
    if (!chosen) {
      unfit.emplace_back(p, message);
      continue;
    }
    Place(*p, trial[*chosen]);
    fits.emplace_back(p, *chosen);
  }
  for (auto& [p, message] : unfit) {
    p->unschedulable = true;
    MarkUnschedulable(*p->pod, message);
  }
  // Permit: the gang goes when minMember of it are on nodes, or waits.
  if (bound + static_cast<int>(fits.size()) >= min) {
    for (auto& [p, i] : fits) {
      if (!Bind(*p->pod, nodes[i].name).ok()) continue;
      p->unschedulable = false;
      Place(*p, nodes[i]);
    }
    gang_waiting_since_.erase(key);
    gang_reason_.erase(key);
    return !unfit.empty();
  }
  gang_reason_[key] = VolcanoGangMessage(static_cast<int>(pending.size()), total, min);
  // The pods that fit wait at Permit, holding nothing here (pjemu's waiting pods reserve no
  // room); after the group's scheduleTimeoutSeconds they are rejected and wait again.
  const Time now = loop_.Now();
  auto since = gang_waiting_since_.emplace(key, now).first;
  const int timeout = api::ScheduleTimeoutSeconds(*group).value_or(api::kDefaultPermitWaitingSeconds);
  if (!fits.empty() && now - since->second >= std::chrono::seconds(timeout)) {
    for (auto& [p, i] : fits) {
      last_message_.erase(p->pod->at("metadata").value("uid", ""));  // said again each time
      MarkUnschedulable(*p->pod, "rejected due to timeout after waiting " +
                                     std::to_string(timeout) + "s at plugin Coscheduling");
    }
    since->second = now;
  }
  return true;
}

void Scheduler::UpdatePodGroups() {
  std::set<std::string> dirty;
  dirty.swap(dirty_gangs_);
  for (const std::string& key : dirty) {
    const GangId id = ParseKey(key);
    auto group = client_.Get(*id.type, id.ns, id.name);
    if (!group.ok()) continue;
    std::vector<const Json*> pods;
    for (const std::string& uid : gang_members_[key]) pods.push_back(pods_by_uid_.at(uid).pod.get());
    if (gang_members_[key].empty()) gang_members_.erase(key);
    auto reason = gang_reason_.find(key);
    const std::string why = reason == gang_reason_.end() ? "" : reason->second;
    Json status = api::PodGroupStatus(*id.type, *group, api::CountGang(pods), why, loop_.Now());
    if (status == group->value("status", Json::object())) continue;
    (void)client_.Patch(*id.type, id.ns, id.name, api::PatchType::kMerge, {{"status", status}},
                        api::Subresource::kStatus);
    // Volcano tells the group's story on the PodGroup itself.
    if (*id.type == api::VolcanoPodGroups() && !why.empty()) {
      (void)client_.Create(api::Events(), id.ns,
                           api::MakeEvent(api::ObjectReferenceOf(*group), "Warning",
                                          "Unschedulable", why, {"volcano", ""}, loop_.Now()));
    }
  }
}

}  // namespace pjemu::scheduler
