#include "emulator/kueue/admission.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/pod_resources.h"
#include "emulator/api/selector.h"
#include "emulator/api/taints.h"
#include "emulator/common/strings.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
using api::ArrayOr, api::Field, api::FieldAt, api::ObjectOr, api::OptInt, api::Str;

constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max() / 4;

// One resource's quota in one flavor of a queue.
struct Quota {
  std::int64_t nominal = 0;
  std::optional<std::int64_t> borrowing_limit;
};

// A ClusterQueue as the scheduler reads it.
struct Queue {
  std::string name;
  const Json* object = nullptr;
  std::string cohort;
  // The resource groups: covered resources, and flavors in order with their quotas.
  struct Group {
    std::vector<std::string> covered;
    std::vector<std::pair<std::string, std::map<std::string, Quota>>> flavors;
  };
  std::vector<Group> groups;
  std::string strategy;
  std::string within;   // preemption.withinClusterQueue
  std::string reclaim;  // preemption.reclaimWithinCohort

  const Group* GroupOf(const std::string& resource) const {
    for (const Group& g : groups) {
      if (std::find(g.covered.begin(), g.covered.end(), resource) != g.covered.end()) return &g;
    }
    return nullptr;
  }
  const Quota* QuotaOf(const std::string& flavor, const std::string& resource) const {
    for (const Group& g : groups) {
      for (const auto& [name, quotas] : g.flavors) {
        if (name != flavor) continue;
        auto it = quotas.find(resource);
        if (it != quotas.end()) return &it->second;
      }
    }
    return nullptr;
  }
};

Queue ReadQueue(const std::string& name, const Json& cq) {
  Queue q;
  q.name = name;
  q.object = &cq;
  const Json& spec = Field(cq, "spec");
  q.cohort = Str(spec, "cohortName");
  q.strategy = Str(spec, "queueingStrategy");
  q.within = Str(Field(spec, "preemption"), "withinClusterQueue");
  q.reclaim = Str(Field(spec, "preemption"), "reclaimWithinCohort");
  for (const Json& g : ArrayOr(Field(spec, "resourceGroups"))) {
    Queue::Group group;
    for (const Json& r : ArrayOr(Field(g, "coveredResources"))) {
      if (r.is_string()) group.covered.push_back(r.get<std::string>());
    }
    for (const Json& f : ArrayOr(Field(g, "flavors"))) {
      std::map<std::string, Quota> quotas;
      for (const Json& r : ArrayOr(Field(f, "resources"))) {
        const std::string res = Str(r, "name");
        Quota quota{api::ResourceAmount(res, Field(r, "nominalQuota")), std::nullopt};
        if (!Field(r, "borrowingLimit").is_null()) {
          quota.borrowing_limit = api::ResourceAmount(res, Field(r, "borrowingLimit"));
        }
        quotas[res] = quota;
      }
      group.flavors.emplace_back(Str(f, "name"), std::move(quotas));
    }
    q.groups.push_back(std::move(group));
  }
  return q;
}

std::int64_t Priority(const Json& wl) { return OptInt(Field(wl, "spec"), "priority").value_or(0); }

std::string CreationTime(const Json& wl) {
  return Str(Field(wl, "metadata"), "creationTimestamp");
}

bool Before(const Json* a, const Json* b) { return ak::QueueOrderBefore(*a, *b); }

bool Reserving(const Json& wl) {
  return FieldAt(wl, {"status", "admission"}).is_object() && !ak::IsTrue(wl, ak::kFinished);
}


// What every queue uses now: queue -> flavor -> resource -> amount.
using QueueUsage = std::map<std::string, Usage>;

void Add(Usage& into, const Usage& more, int sign) {
  for (const auto& [flavor, resources] : more) {
    for (const auto& [res, amount] : resources) into[flavor][res] += sign * amount;
  }
}

std::int64_t UsageOf(const Usage& u, const std::string& flavor, const std::string& res) {
  auto f = u.find(flavor);
  if (f == u.end()) return 0;
  auto r = f->second.find(res);
  return r == f->second.end() ? 0 : r->second;
}

// The scheduler's state through one pass: the queues and what each uses.
struct State {
  std::map<std::string, Queue> queues;
  QueueUsage usage;

  // Room for `res` in `flavor` for queue q now: its unused nominal quota and, in a cohort, what
  // it may borrow of the others' unused nominal quota.
  std::int64_t Available(const Queue& q, const std::string& flavor, const std::string& res) const {
    const Quota* quota = q.QuotaOf(flavor, res);
    if (quota == nullptr) return 0;
    const std::int64_t used = UsageOf(Lookup(q.name), flavor, res);
    if (q.cohort.empty()) return quota->nominal - used;
    const std::int64_t limit =
        quota->borrowing_limit ? quota->nominal + *quota->borrowing_limit : kUnlimited;
    std::int64_t cohort_free = 0;
    for (const auto& [name, other] : queues) {
      if (other.cohort != q.cohort) continue;
      const Quota* oq = other.QuotaOf(flavor, res);
      if (oq != nullptr) cohort_free += oq->nominal - UsageOf(Lookup(name), flavor, res);
    }
    return std::min(limit - used, cohort_free);
  }
  // The most the queue could ever hold of `res` in `flavor` (preemption cannot do better).
  std::int64_t Potential(const Queue& q, const std::string& flavor, const std::string& res) const {
    const Quota* quota = q.QuotaOf(flavor, res);
    return quota == nullptr ? 0 : quota->nominal;
  }
  const Usage& Lookup(const std::string& queue) const {
    static const Usage kNone;
    auto it = usage.find(queue);
    return it == usage.end() ? kNone : it->second;
  }
};

enum class Mode { kFit, kPreempt, kNoFit };

// One pod set's flavors and what it needs.
struct PodSetChoice {
  std::string name;
  std::int64_t count = 0;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  api::ResourceList total;                      // resource -> amount for all its pods
};

struct Assignment {
  Mode mode = Mode::kFit;
  std::vector<PodSetChoice> sets;
  std::string message;  // why not kFit
  Usage usage;          // flavor -> resource -> amount
};

std::string TaintText(const api::Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

// Why `flavor` cannot take the pod set at all ("" when it can).
std::string FlavorMismatch(const std::string& name, const Json& flavor, const Json& pod_template) {
  const Json& spec = Field(flavor, "spec");
  auto tolerations = api::TolerationsOf(pod_template);
  for (const api::Toleration& t : api::TolerationsOf(Json{{"spec", {{"tolerations", ArrayOr(Field(spec, "tolerations"))}}}})) {
    tolerations.push_back(t);
  }
  auto taint = api::FirstUntolerated(
      api::TaintsOf(Json{{"spec", {{"taints", ArrayOr(Field(spec, "nodeTaints"))}}}}), tolerations,
      {api::kNoSchedule, api::kNoExecute});
  if (taint) return "untolerated taint " + TaintText(*taint) + " in flavor " + name;
  const Json& selector = FieldAt(pod_template, {"spec", "nodeSelector"});
  for (const auto& [key, value] : ObjectOr(Field(spec, "nodeLabels")).items()) {
    const Json& wanted = Field(selector, key.c_str());
    if (wanted.is_string() && wanted != value) {
      return "flavor " + name + " doesn't match node affinity";
    }
  }
  return "";
}

// The flavor of one resource group for one pod set: the first that fits, else the first that
// would fit with preemption; the reasons of the others.
struct GroupChoice {
  Mode mode = Mode::kNoFit;
  std::string flavor;
  std::vector<std::string> reasons;
};

GroupChoice ChooseFlavor(const State& state, const Queue& q, const Queue::Group& group,
                         const Json& pod_template, const api::ResourceList& total,
                         const Usage& earlier, const std::map<std::string, Json>& flavors) {
  GroupChoice best;
  for (const auto& [fname, quotas] : group.flavors) {
    auto it = flavors.find(fname);
    if (it == flavors.end()) continue;
    if (std::string why = FlavorMismatch(fname, it->second, pod_template); !why.empty()) {
      best.reasons.push_back(why);
      continue;
    }
    Mode mode = Mode::kFit;
    for (const auto& [res, amount] : total) {
      if (std::find(group.covered.begin(), group.covered.end(), res) == group.covered.end()) continue;
      const std::int64_t before = UsageOf(earlier, fname, res);
      const std::int64_t need = before + amount;
      if (need <= state.Available(q, fname, res)) continue;
      const std::int64_t potential = state.Potential(q, fname, res);
      if (need <= potential) {
        best.reasons.push_back("insufficient unused quota for " + res + " in flavor " + fname +
                               ", " + ak::QuantityJson(res, need - state.Available(q, fname, res)).get<std::string>() +
                               " more needed");
        mode = std::max(mode, Mode::kPreempt);
      } else {
        best.reasons.push_back(
            "insufficient quota for " + res + " in flavor " + fname +
            ", previously considered podsets requests (" + ak::QuantityJson(res, before).get<std::string>() +
            ") + current podset request (" + ak::QuantityJson(res, amount).get<std::string>() +
            ") > maximum capacity (" + ak::QuantityJson(res, potential).get<std::string>() + ")");
        mode = Mode::kNoFit;
        break;
      }
    }
    if (mode == Mode::kFit) return {Mode::kFit, fname, {}};
    if (mode == Mode::kPreempt && best.mode == Mode::kNoFit) {
      best.mode = Mode::kPreempt;
      best.flavor = fname;
    }
  }
  return best;
}

Assignment Assign(const State& state, const Queue& q, const Json& wl,
                  const std::map<std::string, Json>& flavors) {
  Assignment a;
  std::vector<std::string> problems;
  for (const ak::PodSet& set : ak::PodSetsOf(wl)) {
    PodSetChoice choice{set.name, set.count, {}, {}};
    for (const auto& [res, per_pod] : ak::PodSetRequests(set)) {
      if (per_pod > 0) choice.total[res] = per_pod * set.count;
    }
    std::vector<std::string> reasons;
    Mode mode = Mode::kFit;
    std::set<const Queue::Group*> done;
    for (const auto& [res, amount] : choice.total) {
      const Queue::Group* group = q.GroupOf(res);
      if (group == nullptr) {
        reasons.push_back("resource " + res + " unavailable in ClusterQueue");
        mode = Mode::kNoFit;
        continue;
      }
      if (!done.insert(group).second) continue;
      GroupChoice g = ChooseFlavor(state, q, *group, set.pod_template, choice.total, a.usage, flavors);
      reasons.insert(reasons.end(), g.reasons.begin(), g.reasons.end());
      mode = std::max(mode, g.mode);
      if (g.mode == Mode::kNoFit) continue;
      for (const std::string& covered : group->covered) {
        if (!choice.total.count(covered)) continue;
        choice.flavors[covered] = g.flavor;
        a.usage[g.flavor][covered] += choice.total[covered];
      }
    }
    a.mode = std::max(a.mode, mode);
    if (mode != Mode::kFit) {
      std::sort(reasons.begin(), reasons.end());
      problems.push_back("couldn't assign flavors to pod set " + set.name + ": " +
                         Join(reasons, ", "));
    }
    a.sets.push_back(std::move(choice));
  }
  a.message = Join(problems, "; ");
  return a;
}

Json AdmissionJson(const std::string& queue, const Assignment& a) {
  Json sets = Json::array();
  for (const PodSetChoice& s : a.sets) {
    Json flavors = Json::object(), usage = Json::object();
    for (const auto& [res, flavor] : s.flavors) flavors[res] = flavor;
    for (const auto& [res, amount] : s.total) usage[res] = ak::QuantityJson(res, amount);
    sets.push_back({{"name", s.name}, {"flavors", flavors}, {"resourceUsage", usage}, {"count", s.count}});
  }
  return {{"clusterQueue", queue}, {"podSetAssignments", sets}};
}

// Whether `need` fits queue q once `freed` (queue -> its usage given back) is given back: the
// room it has then, its own nominal quota and what its cohort leaves unused.
bool FitsAfter(const State& state, const Queue& q, const Usage& need, const QueueUsage& freed) {
  State after{state.queues, state.usage};
  for (const auto& [queue, usage] : freed) Add(after.usage[queue], usage, -1);
  for (const auto& [flavor, resources] : need) {
    for (const auto& [res, amount] : resources) {
      if (amount > after.Available(q, flavor, res)) return false;
      if (q.cohort.empty() && amount > state.Potential(q, flavor, res)) return false;
    }
  }
  return true;
}

bool LowerOrNewerEqual(const Json& preemptor, const Json& victim) {
  return Priority(victim) < Priority(preemptor) || (Priority(victim) == Priority(preemptor) &&
                                                    CreationTime(victim) > CreationTime(preemptor));
}

// Whether queue q's policy lets `preemptor` take `victim`'s place: in its own queue by
// withinClusterQueue; in another queue of its cohort that borrows, by reclaimWithinCohort.
bool MayPreempt(const State& state, const Queue& q, const Json& preemptor, const Json& victim,
                const std::string& victim_queue) {
  if (victim_queue == q.name) {
    if (q.within == "LowerPriority") return Priority(victim) < Priority(preemptor);
    if (q.within == "LowerOrNewerEqualPriority") return LowerOrNewerEqual(preemptor, victim);
    return false;
  }
  auto other = state.queues.find(victim_queue);
  if (q.cohort.empty() || other == state.queues.end() || other->second.cohort != q.cohort)
    return false;
  if (q.reclaim != "Any" &&
      !(q.reclaim == "LowerPriority" && Priority(victim) < Priority(preemptor))) {
    return false;
  }
  // Only a queue over its nominal quota (borrowing) gives back.
  for (const auto& [flavor, resources] : state.Lookup(victim_queue)) {
    for (const auto& [res, used] : resources) {
      const Quota* quota = other->second.QuotaOf(flavor, res);
      if (quota != nullptr && used > quota->nominal) return true;
    }
  }
  return false;
}

std::string ReservedAt(const Json& wl) {
  const Json* c = ak::Condition(wl, ak::kQuotaReserved);
  return c ? Str(*c, "lastTransitionTime") : "";
}

std::string QueueOfAdmitted(const Json& wl) {
  return Str(FieldAt(wl, {"status", "admission"}), "clusterQueue");
}

// The Workloads to evict so that `wl` fits (empty when none would do), in Kueue's candidate
// order: already evicted ones (on their way out, part of the answer), then those of other
// queues, then lower priority, then the most recently admitted; taken until it fits, then
// given back in reverse while it still fits.
std::vector<const Json*> Victims(const State& state, const Queue& q, const Json& wl,
                                 const Assignment& a, const std::vector<const Json*>& reserving) {
  std::vector<const Json*> candidates;
  for (const Json* other : reserving) {
    if (ak::IsTrue(*other, ak::kEvicted)
            ? QueueOfAdmitted(*other) == q.name
            : MayPreempt(state, q, wl, *other, QueueOfAdmitted(*other))) {
      candidates.push_back(other);
    }
  }
  std::sort(candidates.begin(), candidates.end(), [&q](const Json* x, const Json* y) {
    const bool ex = ak::IsTrue(*x, ak::kEvicted), ey = ak::IsTrue(*y, ak::kEvicted);
    if (ex != ey) return ex;
    const bool ox = QueueOfAdmitted(*x) != q.name, oy = QueueOfAdmitted(*y) != q.name;
    if (ox != oy) return ox;
    if (Priority(*x) != Priority(*y)) return Priority(*x) < Priority(*y);
    if (ReservedAt(*x) != ReservedAt(*y)) return ReservedAt(*x) > ReservedAt(*y);
    return Str(Field(*x, "metadata"), "uid") < Str(Field(*y, "metadata"), "uid");
  });
  auto usage_of = [](const Json* v) {
    return AdmissionUsage(FieldAt(*v, {"status", "admission"}));
  };
  QueueUsage freed;
  std::vector<const Json*> taken;
  for (const Json* c : candidates) {
    if (FitsAfter(state, q, a.usage, freed)) break;
    Add(freed[QueueOfAdmitted(*c)], usage_of(c), 1);
    taken.push_back(c);
  }
  if (!FitsAfter(state, q, a.usage, freed)) return {};
  for (std::size_t i = taken.size(); i-- > 0;) {
    if (ak::IsTrue(*taken[i], ak::kEvicted)) continue;
    QueueUsage without = freed;
    Add(without[QueueOfAdmitted(*taken[i])], usage_of(taken[i]), -1);
    if (FitsAfter(state, q, a.usage, without)) {
      freed = std::move(without);
      taken.erase(taken.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return taken;
}

std::string PathOf(const Queue& q, const std::string& queue) {
  return q.cohort.empty() ? "/" + queue : "/" + q.cohort + "/" + queue;
}

// The Evict decision for `victim`, taken for `preemptor` of queue q.
Evict EvictionOf(const Json& preemptor, const Queue& q, const Json& victim) {
  const std::string victim_queue = QueueOfAdmitted(victim);
  const bool own = victim_queue == q.name;
  return {api::ObjectKey(victim), api::ObjectKey(preemptor),
          own ? "InClusterQueue" : "InCohortReclamation",
          "Preempted to accommodate a workload (UID: " + Str(Field(preemptor, "metadata"), "uid") +
              ", JobUID: " + Str(FieldAt(preemptor, {"metadata", "labels"}), ak::kJobUidLabel) +
              ") due to " +
              (own ? "prioritization in the ClusterQueue" : "reclamation within the cohort") +
              "; preemptor path: " + PathOf(q, q.name) +
              "; preemptee path: " + PathOf(q, victim_queue)};
}

// A pending Workload's blocker before any quota is looked at (reason, message), or nullopt.
std::optional<Pending> Blocker(const Snapshot& s, const Json& wl) {
  const std::string ns = Str(Field(wl, "metadata"), "namespace");
  const std::string lq_name = Str(Field(wl, "spec"), "queueName");
  auto lq = s.local_queues.find(ak::LocalQueueKey(wl));
  const std::string key = api::ObjectKey(wl);
  if (lq == s.local_queues.end()) {
    return Pending{key, "Inadmissible", "LocalQueue " + lq_name + " doesn't exist"};
  }
  if (Str(Field(lq->second, "spec"), "stopPolicy") != "" &&
      Str(Field(lq->second, "spec"), "stopPolicy") != "None") {
    return Pending{key, "Inadmissible", "LocalQueue " + lq_name + " is inactive"};
  }
  const std::string cq_name = Str(Field(lq->second, "spec"), "clusterQueue");
  auto cq = s.cluster_queues.find(cq_name);
  if (cq == s.cluster_queues.end()) {
    return Pending{key, "Inadmissible", "ClusterQueue " + cq_name + " doesn't exist"};
  }
  if (!InactiveReasons(cq->second, s.flavors).empty()) {
    return Pending{key, "Inadmissible", "ClusterQueue " + cq_name + " is inactive"};
  }
  const Json& selector = FieldAt(cq->second, {"spec", "namespaceSelector"});
  auto ns_it = s.namespaces.find(ns);
  bool selected = false;
  if (selector.is_object() && ns_it != s.namespaces.end()) {
    auto parsed = api::LabelSelector::FromObject(selector, "spec.namespaceSelector");
    selected = parsed.ok() && parsed->Matches(ns_it->second);
  }
  if (!selected) {
    return Pending{key, "Pending", "workload namespace doesn't match ClusterQueue selector"};
  }
  return std::nullopt;
}

std::string WaitSeconds(const Json& wl, Time now) {
  auto created = ParseTime(CreationTime(wl));
  const auto secs = created ? std::chrono::duration_cast<std::chrono::seconds>(now - *created).count() : 0;
  return std::to_string(std::max<std::int64_t>(0, secs)) + "s";
}

// One ClusterQueue's pending Workloads, in order, against the state (updated as it admits).
void ScheduleQueue(const Snapshot& s, State& state, const Queue& q, std::vector<const Json*> heads,
                   const std::vector<const Json*>& reserving, Time now, Plan& plan) {
  std::sort(heads.begin(), heads.end(), Before);
  for (const Json* wl : heads) {
    Assignment a = Assign(state, q, *wl, s.flavors);
    if (a.mode == Mode::kFit) {
      Add(state.usage[q.name], a.usage, 1);
      plan.admit.push_back({api::ObjectKey(*wl), AdmissionJson(q.name, a),
                            "Quota reserved in ClusterQueue " + q.name +
                                ", wait time since queued was " + WaitSeconds(*wl, now)});
      continue;
    }
    if (a.mode == Mode::kPreempt) {
      std::vector<const Json*> victims = Victims(state, q, *wl, a, reserving);
      if (!victims.empty()) {
        for (const Json* v : victims) {
          if (!ak::IsTrue(*v, ak::kEvicted)) plan.evict.push_back(EvictionOf(*wl, q, *v));
        }
        plan.pending.push_back({api::ObjectKey(*wl), "Pending",
                                a.message + ". Pending the preemption of " +
                                    std::to_string(victims.size()) + " workload(s)"});
        return;  // the queue waits for its head
      }
    }
    plan.pending.push_back({api::ObjectKey(*wl), "Pending", a.message});
    if (q.strategy == "StrictFIFO") return;
  }
}

}  // namespace

Usage AdmissionUsage(const Json& admission) {
  Usage u;
  for (const Json& set : ArrayOr(Field(admission, "podSetAssignments"))) {
    const Json& flavors = Field(set, "flavors");
    for (const auto& [res, amount] : ObjectOr(Field(set, "resourceUsage")).items()) {
      const std::string flavor = Str(flavors, res.c_str());
      if (!flavor.empty()) u[flavor][res] += api::ResourceAmount(res, amount);
    }
  }
  return u;
}

std::vector<std::string> InactiveReasons(const Json& cq, const std::map<std::string, Json>& flavors) {
  std::vector<std::string> reasons;
  const std::string stop = Str(Field(cq, "spec"), "stopPolicy");
  if (!stop.empty() && stop != "None") reasons.push_back("is stopped");
  std::vector<std::string> missing;
  for (const Json& g : ArrayOr(FieldAt(cq, {"spec", "resourceGroups"}))) {
    for (const Json& f : ArrayOr(Field(g, "flavors"))) {
      if (!flavors.count(Str(f, "name"))) missing.push_back(Str(f, "name"));
    }
  }
  if (!missing.empty()) {
    reasons.push_back("references missing ResourceFlavor(s): " + Join(missing, ","));
  }
  return reasons;
}

Plan Schedule(const Snapshot& s, Time now) {
  Plan plan;
  State state;
  for (const auto& [name, cq] : s.cluster_queues) state.queues.emplace(name, ReadQueue(name, cq));
  std::vector<const Json*> reserving;
  std::map<std::string, std::vector<const Json*>> heads;  // by ClusterQueue
  for (const Json& wl : s.workloads) {
    if (Reserving(wl)) {
      const Json& admission = FieldAt(wl, {"status", "admission"});
      Add(state.usage[Str(admission, "clusterQueue")], AdmissionUsage(admission), 1);
      reserving.push_back(&wl);
      continue;
    }
    if (!ak::IsPending(wl)) continue;
    if (auto blocked = Blocker(s, wl)) {
      plan.pending.push_back(std::move(*blocked));
      continue;
    }
    heads[ak::ClusterQueueOf(wl, s.local_queues)].push_back(&wl);
  }
  for (auto& [name, list] : heads) {
    ScheduleQueue(s, state, state.queues.at(name), std::move(list), reserving, now, plan);
  }
  return plan;
}

}  // namespace pjemu::kueue
