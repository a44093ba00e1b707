#include "emulator/api/podgroup.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/common/strings.h"

namespace pjemu::api {

std::string GangPodSchedulerName(const std::string& gang_scheduler_name) {
  return AsciiLower(gang_scheduler_name) == "volcano" ? kVolcanoSchedulerName : gang_scheduler_name;
}

const ResourceType& SchedulerPluginsPodGroups() {
  return *FindResource("scheduling.x-k8s.io", "podgroups");
}
const ResourceType& VolcanoPodGroups() {
  return *FindResource("scheduling.volcano.sh", "podgroups");
}

std::optional<PodGroupRef> PodGroupOf(const Json& pod) {
  const std::string label = Str(FieldAt(pod, {"metadata", "labels"}), kPodGroupLabel);
  if (!label.empty()) return PodGroupRef{&SchedulerPluginsPodGroups(), label};
  const std::string annotation =
      Str(FieldAt(pod, {"metadata", "annotations"}), kVolcanoGroupAnnotation);
  if (!annotation.empty()) return PodGroupRef{&VolcanoPodGroups(), annotation};
  return std::nullopt;
}

int MinMember(const Json& pod_group) {
  const Json& m = FieldAt(pod_group, {"spec", "minMember"});
  return m.is_number_integer() ? m.get<int>() : 0;
}

std::optional<int> ScheduleTimeoutSeconds(const Json& pod_group) {
  const Json& t = FieldAt(pod_group, {"spec", "scheduleTimeoutSeconds"});
  if (!t.is_number_integer()) return std::nullopt;
  return t.get<int>();
}

GangCounts CountGang(const std::vector<const Json*>& pods) {
  GangCounts c;
  for (const Json* p : pods) {
    ++c.pods;
    const std::string phase = Str(Field(*p, "status"), "phase");
    if (phase == "Running") ++c.running;
    if (phase == "Succeeded") ++c.succeeded;
    if (phase == "Failed") ++c.failed;
    if (!Str(Field(*p, "spec"), "nodeName").empty() && !IsPodTerminal(*p)) ++c.scheduled;
  }
  return c;
}

namespace {

// scheduler-plugins' podgroup controller: Finished and Failed are final.
std::string SchedulerPluginsPhase(const std::string& phase, int min, const GangCounts& c) {
  if (phase == "Finished" || phase == "Failed") return phase;
  if (phase.empty()) return "Pending";
  if (phase == "Pending" && c.pods < min) return "Pending";
  if (c.pods < min) return "Pending";
  if (c.failed > 0 && c.failed + c.running + c.succeeded >= min) return "Failed";
  if (c.succeeded >= min) return "Finished";
  if (c.running + c.succeeded >= min) return "Running";
  return "Scheduling";
}

std::string VolcanoPhase(const std::string& phase, int min, const GangCounts& c) {
  if (c.scheduled + c.succeeded >= min && min > 0) {
    return c.succeeded >= min && c.scheduled == 0 ? "Completed" : "Running";
  }
  if (phase == "Completed") return phase;
  return "Inqueue";  // minResources are not queued against: the enqueue action admits at once
}

}  // namespace

Json PodGroupStatus(const ResourceType& type, const Json& pod_group, const GangCounts& counts,
                    const std::string& unschedulable, Time now) {
  Json status = pod_group.value("status", Json::object());
  const std::string old_phase = Str(status, "phase");
  const int min = MinMember(pod_group);
  status["running"] = counts.running;
  status["succeeded"] = counts.succeeded;
  status["failed"] = counts.failed;
  if (type == SchedulerPluginsPodGroups()) {
    const std::string phase = SchedulerPluginsPhase(old_phase, min, counts);
    if (phase == "Scheduling" && old_phase != "Scheduling") {
      status["scheduleStartTime"] = FormatTime(now);
      status["occupiedBy"] = Str(Field(pod_group, "metadata"), "namespace") + "/" +
                             Str(Field(pod_group, "metadata"), "name");
    }
    status["phase"] = phase;
    return status;
  }
  status["phase"] = VolcanoPhase(old_phase, min, counts);
  Json conditions = Json::array();
  for (const Json& c : ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") != "Unschedulable" && Str(c, "type") != "Scheduled") conditions.push_back(c);
  }
  const bool ready = status["phase"] == "Running" || status["phase"] == "Completed";
  if (!unschedulable.empty() && !ready) {
    conditions.push_back({{"type", "Unschedulable"},
                          {"status", "True"},
                          {"reason", "NotEnoughResources"},
                          {"message", unschedulable},
                          {"transitionID", ""},
                          {"lastTransitionTime", FormatTime(now)}});
  } else if (ready) {
    conditions.push_back({{"type", "Scheduled"},
                          {"status", "True"},
                          {"reason", "tasks in gang are ready to be scheduled"},
                          {"transitionID", ""},
                          {"lastTransitionTime", FormatTime(now)}});
  }
  // Keep the old transition time of an unchanged condition (no write on every pass).
  for (Json& c : conditions) {
    for (const Json& o : ArrayOr(FieldAt(pod_group, {"status", "conditions"}))) {
      if (Str(o, "type") == Str(c, "type") && Str(o, "message") == Str(c, "message"))
        c["lastTransitionTime"] = o.value("lastTransitionTime", c["lastTransitionTime"]);
    }
  }
  status["conditions"] = conditions;
  return status;
}

Status ValidatePodGroup(const Json& pod_group, const Json*, std::vector<std::string>*) {
  const Json& spec = Field(pod_group, "spec");
  if (!spec.is_null() && !spec.is_object()) return Status(Code::kInvalid, "spec: expected an object");
  const Json& min = Field(spec, "minMember");
  if (!min.is_null() && (!min.is_number_integer() || min.get<std::int64_t>() < 0))
    return Status(Code::kInvalid, "spec.minMember: Invalid value: must be an integer >= 0");
  const Json& timeout = Field(spec, "scheduleTimeoutSeconds");
  if (!timeout.is_null() && (!timeout.is_number_integer() || timeout.get<std::int64_t>() < 0))
    return Status(Code::kInvalid,
                  "spec.scheduleTimeoutSeconds: Invalid value: must be an integer >= 0");
  return Status::Ok();
}

}  // namespace pjemu::api
