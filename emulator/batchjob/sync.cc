#include "emulator/batchjob/sync.h"

#include <algorithm>
#include <map>
#include <set>

#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/controller/children.h"

namespace pjemu::batchjob {

namespace bj = api::batchjob;
using api::ArrayOr, api::Field, api::FieldAt, api::Str;

namespace {

// The pods of a pass, sorted into what the controller counts.
struct Census {
  std::vector<const Json*> active;
  std::int64_t terminating = 0;
  std::int64_t ready = 0;
  std::int64_t succeeded = 0;          // NonIndexed: succeeded pods
  std::set<std::int64_t> done_indexes;  // Indexed: succeeded indexes in [0, completions)
  std::set<std::int64_t> held_indexes;  // Indexed: indexes of active pods
  std::int64_t failed = 0;             // failed pods the policy counts
  std::int64_t restarts = 0;           // container restarts of active pods (OnFailure)
  std::optional<Time> last_failure;
  std::optional<PolicyMatch> fail_job;  // a FailJob rule matched
};

std::string Phase(const Json& pod) { return Str(Field(pod, "status"), "phase"); }

bool PodReady(const Json& pod) {
  for (const Json& c : ArrayOr(FieldAt(pod, {"status", "conditions"}))) {
    if (Str(c, "type") == "Ready") return Str(c, "status") == "True";
  }
  return false;
}

std::optional<std::int64_t> PodIndex(const Json& pod) {
  return controller::IndexLabel(pod, bj::kCompletionIndex);
}

// When the pod failed: its containers' latest finishedAt.
std::optional<Time> FinishedAt(const Json& pod) {
  std::optional<Time> latest;
  for (const Json& cs : ArrayOr(FieldAt(pod, {"status", "containerStatuses"}))) {
    auto t = ParseTime(Str(FieldAt(cs, {"state", "terminated"}), "finishedAt"));
    if (t && (!latest || *t > *latest)) latest = t;
  }
  return latest;
}

Census Count(const Json& job, const api::ObjectList& pods) {
  Census c;
  const std::int64_t completions = bj::IntOr(Field(job, "spec"), "completions", -1);
  for (const Json& pod : pods) {
    const std::string phase = Phase(pod);
    const auto index = PodIndex(pod);
    if (phase == "Succeeded") {
      ++c.succeeded;
      if (index && *index < completions) c.done_indexes.insert(*index);
    } else if (phase == "Failed") {
      PolicyMatch m = MatchPodFailurePolicy(job, pod);
      if (m.action == "Ignore") continue;
      ++c.failed;
      if (m.action == "FailJob" && !c.fail_job) c.fail_job = m;
      auto t = FinishedAt(pod);
      if (t && (!c.last_failure || *t > *c.last_failure)) c.last_failure = t;
    } else if (api::Deleting(pod)) {
      ++c.terminating;
    } else {
      c.active.push_back(&pod);
      if (PodReady(pod)) ++c.ready;
      c.restarts += controller::PodRestarts(pod);
      if (index) c.held_indexes.insert(*index);
    }
  }
  return c;
}

Json Condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message, Time now) {
  return {{"type", type},
          {"status", status},
          {"lastProbeTime", FormatTime(now)},
          {"lastTransitionTime", FormatTime(now)},
          {"reason", reason},
          {"message", message}};
}

// Sets condition `type` (adding it, or changing its status); false when it already reads so.
bool SetCondition(Json& status, Json cond) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (Json& c : conds) {
    if (Str(c, "type") != Str(cond, "type")) continue;
    if (Str(c, "status") == Str(cond, "status")) return false;
    c = std::move(cond);
    return true;
  }
  conds.push_back(std::move(cond));
  return true;
}

const Json* ConditionOf(const Json& status, const char* type) {
  for (const Json& c : ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") == type && Str(c, "status") == "True") return &c;
  }
  return nullptr;
}

struct Pass {
  const Json& job;
  const Json& spec;
  Time now;
  Sync out;

  void Event(const char* type, const std::string& reason, const std::string& message) {
    out.actions.push_back(Action::Event(type, reason, message));
  }
  void DeletePod(const Json& pod) {
    out.actions.push_back(Action::Delete(api::Pods(), Str(Field(pod, "metadata"), "name")));
  }
  void DeleteActive(const Census& c) {
    for (const Json* pod : c.active) DeletePod(*pod);
  }
  void Requeue(Duration d) {
    if (!out.requeue_after || d < *out.requeue_after) out.requeue_after = d;
  }
};

// ttlSecondsAfterFinished: the TTL-after-finished controller deletes the finished Job.
void AfterFinished(Pass& p) {
  const auto ttl = api::OptInt(p.spec, "ttlSecondsAfterFinished");
  if (!ttl) return;
  std::optional<Time> at = ParseTime(Str(Field(p.job, "status"), "completionTime"));
  if (const Json* failed = bj::TrueCondition(p.job, bj::kFailed)) {
    at = ParseTime(Str(*failed, "lastTransitionTime"));
  }
  if (!at) return;
  const Time expires = *at + std::chrono::seconds(*ttl);
  if (p.now >= expires) {
    // Background: the pods go with it.
    Action a = Action::Delete(api::Jobs(), Str(Field(p.job, "metadata"), "name"));
    a.propagation = "Background";
    p.out.actions.push_back(std::move(a));
  } else {
    p.Requeue(expires - p.now);
  }
}

// The counters of status, as the controller writes them (zero counts omitted, ready and
// terminating always there).
void WriteCounters(Pass& p, const Census& c, std::int64_t active) {
  Json& s = p.out.status;
  auto put = [&](const char* key, std::int64_t v) {
    if (v > 0) s[key] = v; else s.erase(key);
  };
  put("active", active);
  const bool indexed = bj::IsIndexed(p.job);
  put("succeeded", indexed ? static_cast<std::int64_t>(c.done_indexes.size()) : c.succeeded);
  put("failed", c.failed);
  s["ready"] = std::min<std::int64_t>(c.ready, active);
  s["terminating"] = c.terminating;
  s["uncountedTerminatedPods"] = Json::object();
  if (indexed) {
    std::vector<std::int64_t> done(c.done_indexes.begin(), c.done_indexes.end());
    std::string text = bj::FormatIntervals(done);
    if (text.empty()) s.erase("completedIndexes"); else s["completedIndexes"] = text;
  }
}

// A decided end (FailureTarget or SuccessCriteriaMet True): the remaining pods are removed and
// the terminal condition follows once none is left running or terminating.
bool FinishIfDecided(Pass& p, const Census& c) {
  Json& s = p.out.status;
  const Json* failing = ConditionOf(s, bj::kFailureTarget);
  const Json* succeeding = ConditionOf(s, bj::kSuccessCriteriaMet);
  if (!failing && !succeeding) return false;
  p.DeleteActive(c);
  WriteCounters(p, c, 0);
  if (!c.active.empty() || c.terminating > 0) return true;
  const Json decided = failing ? *failing : *succeeding;
  if (failing) {
    SetCondition(s, Condition(bj::kFailed, "True", Str(decided, "reason"),
                              Str(decided, "message"), p.now));
    p.Event("Warning", Str(decided, "reason"), Str(decided, "message"));
  } else {
    SetCondition(s, Condition(bj::kComplete, "True", Str(decided, "reason"),
                              Str(decided, "message"), p.now));
    s["completionTime"] = FormatTime(p.now);
    p.Event("Normal", "Completed", "Job completed");
  }
  return true;
}

// spec.suspend: pods removed, Suspended True; on resume Suspended False and a new startTime.
bool Suspend(Pass& p, const Census& c) {
  Json& s = p.out.status;
  const bool suspend = Field(p.spec, "suspend").is_boolean() && Field(p.spec, "suspend").get<bool>();
  if (suspend) {
    p.DeleteActive(c);
    if (SetCondition(s, Condition(bj::kSuspended, "True", bj::kJobSuspended, "Job suspended", p.now))) {
      p.Event("Normal", "Suspended", "Job suspended");
    }
    s.erase("startTime");
    WriteCounters(p, c, 0);
    return true;
  }
  if (ConditionOf(s, bj::kSuspended)) {
    SetCondition(s, Condition(bj::kSuspended, "False", bj::kJobResumed, "Job resumed", p.now));
    p.Event("Normal", "Resumed", "Job resumed");
    s.erase("startTime");
  }
  return false;
}

// Why the Job fails now, if it does: a FailJob rule, the backoff limit, the deadline.
std::optional<std::pair<std::string, std::string>> FailureOf(Pass& p, const Census& c) {
  if (c.fail_job) return std::make_pair(std::string(bj::kPodFailurePolicy), c.fail_job->message);
  const std::int64_t limit = bj::IntOr(p.spec, "backoffLimit", 6);
  const bool on_failure = Str(FieldAt(p.spec, {"template", "spec"}), "restartPolicy") == "OnFailure";
  const bool restarts_exceeded =
      on_failure && (limit == 0 ? c.restarts > 0 : c.restarts >= limit);
  if (c.failed > limit || restarts_exceeded) {
    return std::make_pair(std::string(bj::kBackoffLimitExceeded),
                          std::string(bj::kBackoffLimitExceededMessage));
  }
  if (auto deadline = api::OptInt(p.spec, "activeDeadlineSeconds")) {
    auto start = ParseTime(Str(p.out.status, "startTime"));
    if (start) {
      const Time at = *start + std::chrono::seconds(*deadline);
      if (p.now >= at) {
        return std::make_pair(std::string(bj::kDeadlineExceeded),
                              std::string(bj::kDeadlineExceededMessage));
      }
      p.Requeue(at - p.now);
    }
  }
  return std::nullopt;
}

bool Succeeded(const Pass& p, const Census& c) {
  const auto completions = api::OptInt(p.spec, "completions");
  if (bj::IsIndexed(p.job)) {
    return completions && static_cast<std::int64_t>(c.done_indexes.size()) >= *completions;
  }
  if (completions) return c.succeeded >= *completions;
  return c.succeeded > 0 && c.active.empty();  // a work queue: one success and the rest done
}

// manageJob: create the missing pods (lowest pending indexes first), delete the surplus.
void ManagePods(Pass& p, const Census& c, std::int64_t* active) {
  const std::int64_t parallelism = bj::IntOr(p.spec, "parallelism", 1);
  const auto completions = api::OptInt(p.spec, "completions");
  std::int64_t want = parallelism;
  if (completions && !bj::IsIndexed(p.job)) {
    want = std::min(parallelism, std::max<std::int64_t>(0, *completions - c.succeeded));
  } else if (!completions && c.succeeded > 0) {
    want = static_cast<std::int64_t>(c.active.size());
  }
  const std::int64_t have = static_cast<std::int64_t>(c.active.size());
  *active = have;
  if (have > want) {
    for (std::int64_t i = have - 1; i >= want; --i) p.DeletePod(*c.active[i]);
    *active = want;
    return;
  }
  if (have == want) return;
  if (c.failed > 0 && c.last_failure) {
    const Time ready_at = *c.last_failure + FailureBackoff(c.failed);
    if (p.now < ready_at) {
      p.Requeue(ready_at - p.now);
      return;
    }
  }
  std::vector<std::optional<std::int64_t>> indexes;
  if (bj::IsIndexed(p.job)) {
    for (std::int64_t i = 0; i < *completions && static_cast<std::int64_t>(indexes.size()) < want - have; ++i) {
      if (!c.done_indexes.count(i) && !c.held_indexes.count(i)) indexes.push_back(i);
    }
  } else {
    indexes.assign(static_cast<std::size_t>(want - have), std::nullopt);
  }
  for (const auto& index : indexes) {
    p.out.actions.push_back(Action::Create(api::Pods(), DesiredPod(p.job, index)));
  }
  *active = have + static_cast<std::int64_t>(indexes.size());
}

}  // namespace

Duration FailureBackoff(std::int64_t failures) {
  Duration d = std::chrono::seconds(10);
  for (std::int64_t i = 1; i < failures && d < std::chrono::minutes(6); ++i) d *= 2;
  return std::min<Duration>(d, std::chrono::minutes(6));
}

Json DesiredPod(const Json& job, std::optional<std::int64_t> index) {
  const Json& meta = Field(job, "metadata");
  const std::string name = Str(meta, "name");
  const Json& tmpl = FieldAt(job, {"spec", "template"});
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", Field(tmpl, "spec")}};
  Json& pm = pod["metadata"];
  pm["generateName"] = index ? name + "-" + std::to_string(*index) + "-" : name + "-";
  pm["namespace"] = Str(meta, "namespace");
  pm["labels"] = api::ObjectOr(FieldAt(tmpl, {"metadata", "labels"}));
  pm["annotations"] = api::ObjectOr(FieldAt(tmpl, {"metadata", "annotations"}));
  pm["ownerReferences"] = Json::array({controller::ControllerRef(job)});
  if (index) {
    const std::string i = std::to_string(*index);
    pm["labels"][bj::kCompletionIndex] = i;
    pm["annotations"][bj::kCompletionIndex] = i;
    if (Str(pod["spec"], "hostname").empty()) pod["spec"]["hostname"] = name + "-" + i;
    const Json env = {{"name", "JOB_COMPLETION_INDEX"},
                      {"valueFrom",
                       {{"fieldRef",
                         {{"fieldPath", std::string("metadata.annotations['") +
                                            bj::kCompletionIndex + "']"}}}}}};
    for (const char* list : {"initContainers", "containers"}) {
      if (!pod["spec"].contains(list) || !pod["spec"][list].is_array()) continue;
      for (Json& c : pod["spec"][list]) {
        if (!c["env"].is_array()) c["env"] = Json::array();
        c["env"].push_back(env);
      }
    }
  }
  if (pm["annotations"].empty()) pm.erase("annotations");
  return pod;
}

PolicyMatch MatchPodFailurePolicy(const Json& job, const Json& pod) {
  const Json& rules = FieldAt(job, {"spec", "podFailurePolicy", "rules"});
  const std::string pod_ref =
      Str(Field(pod, "metadata"), "namespace") + "/" + Str(Field(pod, "metadata"), "name");
  for (std::size_t i = 0; i < ArrayOr(rules).size(); ++i) {
    const Json& rule = rules[i];
    const std::string action = Str(rule, "action");
    if (const Json& codes = Field(rule, "onExitCodes"); codes.is_object()) {
      const std::string only = Str(codes, "containerName");
      const bool in = Str(codes, "operator") != "NotIn";
      for (const Json& cs : ArrayOr(FieldAt(pod, {"status", "containerStatuses"}))) {
        if (!only.empty() && Str(cs, "name") != only) continue;
        const auto code = api::OptInt(FieldAt(cs, {"state", "terminated"}), "exitCode");
        if (!code || (!in && *code == 0)) continue;
        const Json& values = ArrayOr(Field(codes, "values"));
        const bool listed = std::find(values.begin(), values.end(), Json(*code)) != values.end();
        if (listed != in) continue;
        return {action, "Container " + Str(cs, "name") + " for pod " + pod_ref +
                            " failed with exit code " + std::to_string(*code) + " matching " +
                            action + " rule at index " + std::to_string(i)};
      }
    }
    for (const Json& pattern : ArrayOr(Field(rule, "onPodConditions"))) {
      const std::string want = Str(pattern, "status").empty() ? "True" : Str(pattern, "status");
      for (const Json& cond : ArrayOr(FieldAt(pod, {"status", "conditions"}))) {
        if (Str(cond, "type") != Str(pattern, "type") || Str(cond, "status") != want) continue;
        return {action, "Pod " + pod_ref + " has condition " + Str(cond, "type") + " matching " +
                            action + " rule at index " + std::to_string(i)};
      }
    }
  }
  return {};
}

Sync ComputeSync(const Json& job, const api::ObjectList& pods, Time now) {
  Pass p{job, Field(job, "spec"), now, {}};
  const Json& before = Field(job, "status");
  p.out.status = before.is_object() ? before : Json::object();
  if (bj::IsFinished(job)) {
    AfterFinished(p);
    return std::move(p.out);
  }
  const Census c = Count(job, pods);
  bool done = FinishIfDecided(p, c) || Suspend(p, c);
  if (!done) {
    Json& s = p.out.status;
    if (!s.contains("startTime")) s["startTime"] = FormatTime(now);
    std::optional<std::pair<std::string, std::string>> failure = FailureOf(p, c);
    if (failure || Succeeded(p, c)) {
      Json cond = failure ? Condition(bj::kFailureTarget, "True", failure->first, failure->second, now)
                          : Condition(bj::kSuccessCriteriaMet, "True", bj::kCompletionsReached,
                                      bj::kCompletionsReachedMessage, now);
      SetCondition(s, std::move(cond));
      FinishIfDecided(p, c);
    } else {
      std::int64_t active = 0;
      ManagePods(p, c, &active);
      WriteCounters(p, c, active);
    }
  }
  p.out.status_changed = p.out.status != before;
  return std::move(p.out);
}

}  // namespace pjemu::batchjob
