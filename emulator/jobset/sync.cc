#include "emulator/jobset/sync.h"

#include <map>

#include "emulator/api/batchjob.h"
#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/controller/children.h"

namespace pjemu::jobset {

namespace ajs = api::jobset;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

namespace {

// The child Jobs by role (getChildJobs): those of an earlier restart attempt, and the current
// attempt's active, succeeded (Complete) and failed ones.
struct Children {
  std::vector<const Json*> previous, active, succeeded, failed;
};

// One pass's context (upstream's updateStatusOpts): the status being built and the actions.
struct Pass {
  const Json& js;
  Time now;
  Json status;
  std::vector<Action> actions;
};

std::int64_t Replicas(const Json& rjob) { return OptInt(rjob, "replicas").value_or(1); }
const Json& ReplicatedJobs(const Json& js) { return ArrayOr(FieldAt(js, {"spec", "replicatedJobs"})); }
std::string Label(const Json& obj, const char* key) {
  return Str(FieldAt(obj, {"metadata", "labels"}), key);
}

Children Classify(const api::ObjectList& jobs, std::int64_t restarts) {
  Children c;
  for (const Json& job : jobs) {
    auto attempt = controller::IndexLabel(job, ajs::kRestartsKey);
    if (!attempt || *attempt < restarts) {
      c.previous.push_back(&job);
    } else if (api::TrueCondition(job, api::batchjob::kComplete)) {
      c.succeeded.push_back(&job);
    } else if (api::TrueCondition(job, api::batchjob::kFailed)) {
      c.failed.push_back(&job);
    } else {
      c.active.push_back(&job);
    }
  }
  return c;
}

// calculateReplicatedJobStatuses: per replicatedJob, in spec order.
Json ReplicatedJobsStatus(const Json& js, const Children& c) {
  Json out = Json::array();
  for (const Json& rjob : ReplicatedJobs(js)) {
    const std::string name = Str(rjob, "name");
    auto count = [&](const std::vector<const Json*>& jobs, auto&& pred) {
      std::int64_t n = 0;
      for (const Json* j : jobs) n += Label(*j, ajs::kReplicatedJobNameKey) == name && pred(*j);
      return n;
    };
    auto any = [](const Json&) { return true; };
    auto ready = [](const Json& j) {
      const Json& st = Field(j, "status");
      return OptInt(st, "ready").value_or(0) + OptInt(st, "succeeded").value_or(0) >=
             OptInt(Field(j, "spec"), "parallelism").value_or(1);
    };
    auto active = [](const Json& j) { return OptInt(Field(j, "status"), "active").value_or(0) > 0; };
    auto suspended = [](const Json& j) { return FieldAt(j, {"spec", "suspend"}) == Json(true); };
    out.push_back({{"name", name},
                   {"ready", count(c.active, ready)},
                   {"succeeded", count(c.succeeded, any)},
                   {"failed", count(c.failed, any)},
                   {"active", count(c.active, active)},
                   {"suspended", count(c.active, suspended)}});
  }
  return out;
}

// updateCondition: the same type with the same status is a no-op; a different status replaces
// it in place; a new type is appended. An event carries the condition's reason and message.
void SetCondition(Pass& p, const char* type, bool value, const char* reason, const char* message,
                  const char* event_type) {
  Json& conds = p.status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  const std::string st = value ? "True" : "False";
  Json cond = {{"type", type}, {"status", st}, {"reason", reason}, {"message", message},
               {"lastTransitionTime", FormatTime(p.now)}};
  bool found = false;
  for (Json& c : conds) {
    if (Str(c, "type") != type) continue;
    if (Str(c, "status") == st) return;
    c = cond;
    found = true;
  }
  if (!found) conds.push_back(cond);
  p.actions.push_back(Action::Event(event_type, reason, message));
}

void Finish(Pass& p, bool completed, const char* reason, const char* message) {
  SetCondition(p, completed ? ajs::kCompleted : ajs::kFailed, true, reason, message,
               completed ? "Normal" : "Warning");
  p.status["terminalState"] = completed ? ajs::kCompleted : ajs::kFailed;
}

void DeleteJobs(Pass& p, const std::vector<const Json*>& jobs) {
  for (const Json* j : jobs) {
    // deleteJobs: no events; background propagation takes the pods.
    Action a = Action::Delete(api::Jobs(), Str(Field(*j, "metadata"), "name"));
    a.quiet = true;
    a.propagation = "Background";
    p.actions.push_back(std::move(a));
  }
}

// Restart (RestartJobSet / RestartJobSetAndIgnoreMaxRestarts): a new attempt, whose Jobs the
// next pass creates after deleting this attempt's.
void Restart(Pass& p, bool counts) {
  const Json& policy = FieldAt(p.js, {"spec", "failurePolicy"});
  const std::int64_t towards = OptInt(p.status, "restartsCountTowardsMax").value_or(0);
  if (counts && towards >= OptInt(policy, "maxRestarts").value_or(0)) {
    return Finish(p, false, ajs::kReachedMaxRestarts, ajs::kReachedMaxRestartsMessage);
  }
  const std::int64_t restarts = OptInt(p.status, "restarts").value_or(0) + 1;
  p.status["restarts"] = restarts;
  if (counts) p.status["restartsCountTowardsMax"] = towards + 1;
  p.actions.push_back(Action::Event("Warning", ajs::kRestarting,
                                    "restarting jobset, attempt " + std::to_string(restarts)));
}

// The first rule that matches the (first) failed Job: its onJobFailureReasons (any when empty)
// and targetReplicatedJobs (any when empty).
const Json* MatchingRule(const Json& policy, const Json& failed_job) {
  const Json* failed = api::TrueCondition(failed_job, api::batchjob::kFailed);
  const std::string reason = failed ? Str(*failed, "reason") : "";
  const std::string rjob = Label(failed_job, ajs::kReplicatedJobNameKey);
  auto listed = [](const Json& list, const std::string& v) {
    if (ArrayOr(list).empty()) return true;
    for (const Json& e : list) if (e == Json(v)) return true;
    return false;
  };
  for (const Json& rule : ArrayOr(Field(policy, "rules"))) {
    if (listed(Field(rule, "onJobFailureReasons"), reason) &&
        listed(Field(rule, "targetReplicatedJobs"), rjob)) {
      return &rule;
    }
  }
  return nullptr;
}

// executeFailurePolicy: no policy fails the JobSet; else the matching rule's action (a table),
// RestartJobSet when none matches.
void ApplyFailurePolicy(Pass& p, const Children& c) {
  const Json& policy = FieldAt(p.js, {"spec", "failurePolicy"});
  if (!policy.is_object()) return Finish(p, false, ajs::kFailedJobs, ajs::kFailedJobsMessage);
  static const std::map<std::string, void (*)(Pass&)> kActions = {
      {"FailJobSet",
       [](Pass& q) { Finish(q, false, ajs::kFailJobSetAction, ajs::kFailJobSetActionMessage); }},
      {"RestartJobSet", [](Pass& q) { Restart(q, true); }},
      {"RestartJobSetAndIgnoreMaxRestarts", [](Pass& q) { Restart(q, false); }},
  };
  const Json* rule = MatchingRule(policy, *c.failed.front());
  auto it = kActions.find(rule ? Str(*rule, "action") : "RestartJobSet");
  (it != kActions.end() ? it->second : kActions.at("RestartJobSet"))(p);
}

// The success policy: All (every Job of the targets succeeded) or Any (one did); the targets
// default to every replicatedJob.
bool SuccessPolicyMet(const Json& js, const Children& c) {
  const Json& policy = FieldAt(js, {"spec", "successPolicy"});
  const Json& targets = ArrayOr(Field(policy, "targetReplicatedJobs"));
  const bool any = Str(policy, "operator") == "Any";
  std::map<std::string, std::int64_t> succeeded;
  for (const Json* j : c.succeeded) ++succeeded[Label(*j, ajs::kReplicatedJobNameKey)];
  bool all_met = true;
  for (const Json& rjob : ReplicatedJobs(js)) {
    const std::string name = Str(rjob, "name");
    bool target = targets.empty();
    for (const Json& t : targets) target = target || t == Json(name);
    if (!target) continue;
    if (any && succeeded[name] > 0) return true;
    all_met = all_met && succeeded[name] >= Replicas(rjob);
  }
  return !any && all_met;
}

void CreateMissing(Pass& p, const Children& c, bool service_exists) {
  if (ajs::DnsHostnames(p.js) && !service_exists) {
    Action a = Action::Create(api::Services(), DesiredService(p.js));
    a.if_absent = true;
    p.actions.push_back(std::move(a));
  }
  std::map<std::string, bool> present;
  for (const auto* list : {&c.active, &c.succeeded, &c.failed}) {
    for (const Json* j : *list) present[Str(Field(*j, "metadata"), "name")] = true;
  }
  const std::string name = Str(Field(p.js, "metadata"), "name");
  for (const Json& rjob : ReplicatedJobs(p.js)) {
    for (std::int64_t i = 0; i < Replicas(rjob); ++i) {
      if (present.count(ajs::JobName(name, Str(rjob, "name"), i))) continue;
      p.actions.push_back(Action::Create(api::Jobs(), DesiredJob(p.js, rjob, i)));
    }
  }
}

// Suspend or resume: the active Jobs follow spec.suspend; the Suspended condition says so.
void SuspendOrResume(Pass& p, const Children& c) {
  const bool suspend = FieldAt(p.js, {"spec", "suspend"}) == Json(true);
  if (suspend) {
    SetCondition(p, ajs::kSuspended, true, ajs::kSuspendedJobs, ajs::kSuspendedJobsMessage,
                 "Normal");
  } else if (api::TrueCondition(p.js, ajs::kSuspended)) {
    SetCondition(p, ajs::kSuspended, false, ajs::kResumeJobs, ajs::kResumeJobsMessage, "Normal");
  }
  for (const Json* j : c.active) {
    if ((FieldAt(*j, {"spec", "suspend"}) == Json(true)) == suspend) continue;
    Json update = *j;
    update["spec"]["suspend"] = suspend;
    p.actions.push_back(Action::Update(api::Jobs(), std::move(update)));
  }
}

}  // namespace

Sync ComputeSync(const Json& js, const api::ObjectList& jobs, bool service_exists, Time now) {
  Pass p{js, now, api::ObjectOr(Field(js, "status")), {}};
  const std::int64_t restarts = OptInt(p.status, "restarts").value_or(0);
  const Children c = Classify(jobs, restarts);
  if (ajs::IsFinished(js)) {  // a finished JobSet only stops its running Jobs
    DeleteJobs(p, c.active);
    Sync out;
    out.status = p.status;
    out.actions = std::move(p.actions);
    return out;
  }
  p.status["restarts"] = restarts;
  p.status["replicatedJobsStatus"] = ReplicatedJobsStatus(js, c);
  DeleteJobs(p, c.previous);
  if (!c.failed.empty()) {
    ApplyFailurePolicy(p, c);
  } else if (!c.succeeded.empty() && SuccessPolicyMet(js, c)) {
    Finish(p, true, ajs::kAllJobsCompleted, ajs::kAllJobsCompletedMessage);
  } else {
    CreateMissing(p, c, service_exists);
    SuspendOrResume(p, c);
  }
  Sync out;
  out.status_changed = p.status != Field(js, "status");
  out.status = std::move(p.status);
  out.actions = std::move(p.actions);
  return out;
}

Json DesiredJob(const Json& js, const Json& rjob, std::int64_t index) {
  const Json& meta = Field(js, "metadata");
  const std::string name = Str(meta, "name");
  const std::string ns = Str(meta, "namespace").empty() ? "default" : Str(meta, "namespace");
  const std::string rname = Str(rjob, "name");
  const std::string group = Str(rjob, "groupName").empty() ? ajs::kDefaultGroup : Str(rjob, "groupName");
  std::int64_t global = 0, global_index = 0, group_replicas = 0, group_index = 0;
  bool before = true;
  for (const Json& r : ReplicatedJobs(js)) {
    const bool same = Str(r, "name") == rname;
    const bool in_group = (Str(r, "groupName").empty() ? ajs::kDefaultGroup : Str(r, "groupName")) == group;
    if (same) before = false;
    if (before) global_index += Replicas(r);
    if (before && in_group) group_index += Replicas(r);
    if (in_group) group_replicas += Replicas(r);
    global += Replicas(r);
  }
  const std::string job_name = ajs::JobName(name, rname, index);
  const Json tags = {{ajs::kJobSetNameKey, name},
                     {ajs::kReplicatedJobNameKey, rname},
                     {ajs::kReplicatedJobReplicasKey, std::to_string(Replicas(rjob))},
                     {ajs::kGlobalReplicasKey, std::to_string(global)},
                     {ajs::kJobIndexKey, std::to_string(index)},
                     {ajs::kJobKey, ajs::JobKey(ns, job_name)},
                     {ajs::kJobGlobalIndexKey, std::to_string(global_index + index)},
                     {ajs::kGroupNameKey, group},
                     {ajs::kGroupReplicasKey, std::to_string(group_replicas)},
                     {ajs::kJobGroupIndexKey, std::to_string(group_index + index)},
                     {ajs::kRestartsKey, std::to_string(OptInt(Field(js, "status"), "restarts").value_or(0))}};
  Json labels = tags;
  labels[ajs::kJobSetUidKey] = Str(meta, "uid");
  const Json& tmpl = Field(rjob, "template");
  Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
              {"metadata", {{"name", job_name}, {"namespace", ns},
                            {"labels", api::ObjectOr(FieldAt(tmpl, {"metadata", "labels"}))},
                            {"annotations", api::ObjectOr(FieldAt(tmpl, {"metadata", "annotations"}))},
                            {"ownerReferences", Json::array({controller::ControllerRef(js)})}}},
              {"spec", api::ObjectOr(Field(tmpl, "spec"))}};
  Json& pod_meta = job["spec"]["template"]["metadata"];
  if (!pod_meta.is_object()) pod_meta = Json::object();
  for (Json* m : {&job["metadata"], &pod_meta}) {
    if (!(*m)["labels"].is_object()) (*m)["labels"] = Json::object();
    if (!(*m)["annotations"].is_object()) (*m)["annotations"] = Json::object();
    (*m)["labels"].update(labels);
    (*m)["annotations"].update(tags);
  }
  if (ajs::DnsHostnames(js)) job["spec"]["template"]["spec"]["subdomain"] = ajs::Subdomain(js);
  job["spec"]["suspend"] = FieldAt(js, {"spec", "suspend"}) == Json(true);
  return job;
}

Json DesiredService(const Json& js) {
  const Json& meta = Field(js, "metadata");
  const Json& publish = FieldAt(js, {"spec", "network", "publishNotReadyAddresses"});
  return {{"apiVersion", "v1"}, {"kind", "Service"},
          {"metadata", {{"name", ajs::Subdomain(js)},
                        {"namespace", Str(meta, "namespace").empty() ? "default" : Str(meta, "namespace")},
                        {"ownerReferences", Json::array({controller::ControllerRef(js)})}}},
          {"spec", {{"clusterIP", "None"},
                    {"selector", {{ajs::kJobSetNameKey, Str(meta, "name")}}},
                    {"publishNotReadyAddresses", !publish.is_boolean() || publish.get<bool>()}}}};
}

}  // namespace pjemu::jobset
