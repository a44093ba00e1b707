#include "emulator/trainjob/sync.h"

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/trainjob.h"
#include "emulator/trainjob/build.h"
#include "emulator/trainjob/coscheduling.h"

namespace pjemu::trainjob {

namespace atj = api::trainjob;
namespace ajs = api::jobset;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

namespace {

struct Pass {
  const Json& tj;
  Time now;
  Json status;
  std::vector<Action> actions;
};

// meta.SetStatusCondition: a new type is appended; an existing one takes the new reason and
// message, and a new lastTransitionTime only when its status changes.
void SetCondition(Pass& p, const std::string& type, bool value, const std::string& reason,
                  const std::string& message) {
  Json& conds = p.status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  const std::string st = value ? "True" : "False";
  for (Json& c : conds) {
    if (Str(c, "type") != type) continue;
    if (Str(c, "status") != st) c["lastTransitionTime"] = FormatTime(p.now);
    c["status"] = st;
    c["reason"] = reason;
    c["message"] = message;
    return;
  }
  conds.push_back({{"type", type}, {"status", st}, {"reason", reason}, {"message", message},
                   {"lastTransitionTime", FormatTime(p.now)}});
}

bool Suspended(const Json& tj) { return FieldAt(tj, {"spec", "suspend"}) == Json(true); }

// Suspended/Resumed from spec.suspend (a Resumed condition only after a Suspended one).
void SyncSuspended(Pass& p) {
  if (Suspended(p.tj)) {
    SetCondition(p, atj::kSuspended, true, atj::kSuspendedReason, atj::kSuspendedMessage);
  } else if (api::TrueCondition(p.tj, atj::kSuspended)) {
    SetCondition(p, atj::kSuspended, false, atj::kResumedReason, atj::kResumedMessage);
  }
}

// The jobset plugin's Status(): Completed becomes Complete and Failed stays Failed, with the
// JobSet's reason and message; jobsStatus is the JobSet's replicatedJobsStatus.
void CopyJobSetStatus(Pass& p, const Json& js) {
  Json jobs = Json::array();
  for (const Json& r : ArrayOr(FieldAt(js, {"status", "replicatedJobsStatus"}))) {
    Json entry = {{"name", Str(r, "name")}};
    for (const char* key : {"ready", "succeeded", "failed", "active", "suspended"}) {
      entry[key] = OptInt(r, key).value_or(0);
    }
    jobs.push_back(entry);
  }
  if (!jobs.empty()) p.status["jobsStatus"] = jobs;
  static const std::pair<const char*, const char*> kCopied[] = {{ajs::kCompleted, atj::kComplete},
                                                                {ajs::kFailed, atj::kFailed}};
  for (const auto& [from, to] : kCopied) {
    if (const Json* c = api::TrueCondition(js, from)) {
      SetCondition(p, to, true, Str(*c, "reason"), Str(*c, "message"));
    }
  }
}

// The coscheduling plugin's Build, applied: its PodGroup when there is none, or while suspended.
void ApplyPodGroup(Pass& p, const Json& runtime, const Json* current) {
  if (!Coscheduled(runtime)) return;
  const Json desired = DesiredPodGroup(p.tj, runtime, DesiredJobSet(p.tj, runtime));
  std::optional<Json> apply = PodGroupToApply(p.tj, current, desired);
  if (!apply) return;
  const api::ResourceType& type = api::SchedulerPluginsPodGroups();
  p.actions.push_back(current ? Action::Update(type, std::move(*apply))
                              : Action::Create(type, std::move(*apply)));
}

// The jobset plugin: the JobSet created once, then its suspend following the TrainJob's and
// its status copied.
void FollowJobSet(Pass& p, const Json& runtime, const Json* js) {
  if (!js) {
    p.actions.push_back(Action::Create(api::JobSets(), DesiredJobSet(p.tj, runtime)));
    return;
  }
  if ((FieldAt(*js, {"spec", "suspend"}) == Json(true)) != Suspended(p.tj)) {
    Json update = *js;
    update["spec"]["suspend"] = Suspended(p.tj);
    p.actions.push_back(Action::Update(api::JobSets(), std::move(update)));
  }
  CopyJobSetStatus(p, *js);
}

}  // namespace

std::optional<Time> DeadlineOf(const Json& tj) {
  auto seconds = OptInt(Field(tj, "spec"), "activeDeadlineSeconds");
  if (!seconds || Suspended(tj)) return std::nullopt;
  std::optional<Time> start = ParseTime(Str(Field(tj, "metadata"), "creationTimestamp"));
  for (const Json& c : ArrayOr(FieldAt(tj, {"status", "conditions"}))) {
    if (Str(c, "type") == atj::kSuspended && Str(c, "status") == "False") {
      start = ParseTime(Str(c, "lastTransitionTime"));
    }
  }
  if (!start) return std::nullopt;
  return *start + std::chrono::seconds(*seconds);
}

Sync ComputeSync(const Json& tj, const Json* runtime, const Json* js, const Json* pod_group,
                 Time now) {
  Pass p{tj, now, api::ObjectOr(Field(tj, "status")), {}};
  Sync out;
  if (atj::IsFinished(tj)) return out;
  SyncSuspended(p);
  const std::optional<Time> deadline = DeadlineOf(tj);
  if (deadline && now >= *deadline) {
    SetCondition(p, atj::kFailed, true, atj::kDeadlineExceeded, atj::kDeadlineExceededMessage);
    if (js) {
      p.actions.push_back(Action::Delete(api::JobSets(), Str(Field(tj, "metadata"), "name")));
    }
  } else if (!runtime) {
    const auto [kind, name] = atj::RuntimeRef(tj);
    p.actions.push_back(
        Action::Event("Warning", "TrainingRuntimeNotFound", kind + " " + name + " not found"));
  } else {
    ApplyPodGroup(p, *runtime, pod_group);
    FollowJobSet(p, *runtime, js);
  }
  if (deadline && now < *deadline) out.requeue_after = *deadline - now;
  out.status_changed = p.status != Field(tj, "status");
  out.status = std::move(p.status);
  out.actions = std::move(p.actions);
  return out;
}

}  // namespace pjemu::trainjob
