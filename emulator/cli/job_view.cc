#include "emulator/cli/job_view.h"

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"

namespace pjemu::cli {
namespace {

const Json& Conditions(const Json& job) {
  static const Json kEmpty = Json::array();
  if (!job.contains("status") || !job["status"].contains("conditions") ||
      !job["status"]["conditions"].is_array()) {
    return kEmpty;
  }
  return job["status"]["conditions"];
}

const Json& ContainerStatuses(const Json& pod, const char* field = "containerStatuses") {
  static const Json kEmpty = Json::array();
  if (!pod.contains("status") || !pod["status"].contains(field) ||
      !pod["status"][field].is_array()) {
    return kEmpty;
  }
  return pod["status"][field];
}

std::optional<Time> TimeField(const Json& obj, const char* a, const char* b) {
  if (!obj.contains(a) || !obj[a].contains(b) || !obj[a][b].is_string()) return std::nullopt;
  return ParseTime(obj[a][b].get<std::string>());
}

}  // namespace

std::string JobState(const Json& job) { return api::JobState(job); }

std::optional<std::string> JobOutcome(const Json& job) {
  const Json* final = api::FinalCondition(job);
  if (final == nullptr) return std::nullopt;
  return api::Str(*final, "type");
}

std::string ConditionMessage(const Json& job, const std::string& type) {
  for (const Json& c : Conditions(job)) {
    if (c.value("type", "") == type) return c.value("message", "");
  }
  return "";
}

std::int64_t PodRestarts(const Json& pod) {
  std::int64_t n = 0;
  for (const Json& cs : ContainerStatuses(pod)) n += cs.value("restartCount", std::int64_t{0});
  return n;
}

std::string PodStatusText(const Json& pod) { return api::PodStatusText(pod); }

std::optional<WaitingInfo> PodWaiting(const Json& pod) {
  for (const char* field : {"initContainerStatuses", "containerStatuses"}) {
    for (const Json& cs : ContainerStatuses(pod, field)) {
      const Json& st = cs.value("state", Json::object());
      if (st.contains("waiting") && st["waiting"].contains("reason")) {
        return WaitingInfo{cs.value("name", ""), st["waiting"].value("reason", ""),
                           st["waiting"].value("message", "")};
      }
    }
  }
  return std::nullopt;
}

std::string PodHoldMessage(const Json& pod) {
  for (const Json& c : pod.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") {
      return c.value("message", "");
    }
  }
  auto waiting = PodWaiting(pod);
  return waiting ? waiting->message : "";
}

Duration JobDuration(const Json& job, Time now) {
  auto start = TimeField(job, "status", "startTime");
  if (!start) start = TimeField(job, "metadata", "creationTimestamp");
  if (!start) return Duration::zero();
  auto end = TimeField(job, "status", "completionTime");
  Time stop = end ? *end : now;
  return stop > *start ? std::chrono::duration_cast<Duration>(stop - *start) : Duration::zero();
}

}  // namespace pjemu::cli
