#include "emulator/kubelet/pod_state.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_resources.h"

namespace pjemu::kubelet {
namespace {

bool Succeeded(const ContainerState& c) {
  return c.phase == ContainerState::Phase::kTerminated && c.exit_code == 0;
}

// "containers with unready status: [a b]".
std::string ListNames(const std::vector<std::string>& names) {
  std::string s = "[";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? " " : "") + names[i];
  return s + "]";
}

Json Condition(const Json& old_conditions, const std::string& type, bool ok,
               const std::string& reason, const std::string& message, Time now) {
  // Members added one by one, in key order (api::AppendMember): a status is computed for every
  // write, and initializer lists build each pair as a temporary array first.
  const char* status = ok ? "True" : "False";
  const Json* kept = nullptr;  // the transition time of the same type with the same status
  for (const Json& o : old_conditions) {
    const Json& t = api::Field(o, "type");
    const Json& st = api::Field(o, "status");
    if (t.is_string() && t.get_ref<const std::string&>() == type && st.is_string() &&
        st.get_ref<const std::string&>() == status) {
      const Json& at = api::Field(o, "lastTransitionTime");
      if (at.is_string()) kept = &at;
    }
  }
  Json c = Json::object();
  api::AppendMember(c, "lastProbeTime", nullptr);
  api::AppendMember(c, "lastTransitionTime", kept ? *kept : Json(FormatTime(now)));
  if (!message.empty()) api::AppendMember(c, "message", message);
  if (!reason.empty()) api::AppendMember(c, "reason", reason);
  api::AppendMember(c, "status", status);
  api::AppendMember(c, "type", type);
  return c;
}

}  // namespace

Json TerminatedJson(const ContainerState& c) {
  Json t = Json::object();  // in key order (api::AppendMember)
  if (!c.container_id.empty()) api::AppendMember(t, "containerID", c.container_id);
  api::AppendMember(t, "exitCode", c.exit_code);
  api::AppendMember(t, "finishedAt", FormatTime(c.finished_at));
  if (!c.message.empty()) api::AppendMember(t, "message", c.message);
  api::AppendMember(t, "reason", c.reason);
  if (c.signal) api::AppendMember(t, "signal", c.signal);
  api::AppendMember(t, "startedAt",
                    c.started_at == Time{} ? Json(nullptr) : Json(FormatTime(c.started_at)));
  return t;
}

Json ContainerStatusJson(const ContainerState& c) {
  const bool running = c.phase == ContainerState::Phase::kRunning;
  Json state = Json::object();
  switch (c.phase) {
    case ContainerState::Phase::kWaiting: {
      Json& w = state["waiting"];
      w["reason"] = c.reason;
      if (!c.message.empty()) w["message"] = c.message;
      break;
    }
    case ContainerState::Phase::kRunning:
      state["running"]["startedAt"] = FormatTime(c.started_at);
      break;
    case ContainerState::Phase::kTerminated:
      state["terminated"] = TerminatedJson(c);
      break;
  }
  Json s = Json::object();  // in key order (api::AppendMember)
  if (!c.container_id.empty()) api::AppendMember(s, "containerID", c.container_id);
  api::AppendMember(s, "image", c.status_image.empty() ? c.image : c.status_image);
  api::AppendMember(s, "imageID", c.image_id);
  api::AppendMember(s, "lastState", c.last_state);
  api::AppendMember(s, "name", c.name);
  api::AppendMember(s, "ready", running);
  api::AppendMember(s, "restartCount", c.restart_count);
  api::AppendMember(s, "started", running);
  api::AppendMember(s, "state", std::move(state));
  return s;
}

bool ShouldRestart(const std::string& restart_policy, int exit_code) {
  if (restart_policy == "Never") return false;
  if (restart_policy == "OnFailure") return exit_code != 0;
  return true;  // Always, the default
}

std::string ComputePhase(const PodState& state, const std::string& restart_policy) {
  if (!state.terminal_phase.empty()) return state.terminal_phase;
  bool pending_init = false;
  for (const auto& c : state.init) {
    if (Succeeded(c)) continue;
    bool failed = c.phase == ContainerState::Phase::kTerminated ||
                  (c.phase == ContainerState::Phase::kWaiting && !c.last_state.empty());
    if (failed && restart_policy == "Never") return "Failed";
    pending_init = true;
  }
  if (pending_init) return "Pending";
  int running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const auto& c : state.main) {
    switch (c.phase) {
      case ContainerState::Phase::kRunning:
        ++running;
        break;
      case ContainerState::Phase::kTerminated:
        ++stopped;
        if (c.exit_code == 0) ++succeeded;
        break;
      case ContainerState::Phase::kWaiting:
        if (!c.last_state.empty()) {
          ++stopped;  // restarting after a termination (CrashLoopBackOff)
        } else {
          ++waiting;
        }
        break;
    }
  }
  if (waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (restart_policy == "Always") return "Running";
    if (stopped == succeeded) return "Succeeded";
    if (restart_policy == "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

Json ComputePodStatus(const Json& pod, const PodState& state, Time now) {
  // Read in place: a status is computed for every write, and copying the spec is most of it.
  const Json& old = api::ObjectOr(api::Field(pod, "status"));
  const Json& old_conditions = api::ArrayOr(api::Field(old, "conditions"));
  std::string policy = api::ObjectOr(api::Field(pod, "spec")).value("restartPolicy", "Always");
  std::string phase = ComputePhase(state, policy);
  bool terminal = phase == "Succeeded" || phase == "Failed";

  std::vector<std::string> incomplete_init, unready;
  for (const auto& c : state.init) {
    if (!Succeeded(c)) incomplete_init.push_back(c.name);
  }
  for (const auto& c : state.main) {
    if (c.phase != ContainerState::Phase::kRunning) unready.push_back(c.name);
  }
  Json conditions = Json::array();
  bool initialized = incomplete_init.empty() || phase == "Succeeded";
  conditions.push_back(Condition(
      old_conditions, "Initialized", initialized, initialized ? "" : "ContainersNotInitialized",
      initialized ? "" : "containers with incomplete status: " + ListNames(incomplete_init), now));
  bool ready = unready.empty() && !terminal;
  std::string reason = ready ? "" : terminal ? "PodCompleted" : "ContainersNotReady";
  std::string message =
      ready || terminal ? "" : "containers with unready status: " + ListNames(unready);
  conditions.push_back(Condition(old_conditions, "Ready", ready, reason, message, now));
  conditions.push_back(Condition(old_conditions, "ContainersReady", ready, reason, message, now));
  for (const Json& o : old_conditions) {
    const Json& t = api::Field(o, "type");
    static const std::string kNone;
    const std::string& type = t.is_string() ? t.get_ref<const std::string&>() : kNone;
    if (type != "Initialized" && type != "Ready" && type != "ContainersReady") {
      conditions.push_back(o);
    }
  }

  Json status = Json::object();
  status["phase"] = phase;
  status["conditions"] = std::move(conditions);
  // As the kubelet's qos.GetPodQOS (Kubernetes 1.28 on): the class the status holds, else the
  // one the spec gives (ComputePodQOS).
  const Json& qos = api::FieldAt(pod, {"status", "qosClass"});
  status["qosClass"] = qos.is_string() && !qos.get_ref<const std::string&>().empty()
                           ? qos
                           : Json(api::PodQosClass(pod));
  auto addresses = [&](const char* one, const char* all, const std::string& ip) {
    if (ip.empty()) return;
    status[one] = ip;
    Json item = Json::object();
    item["ip"] = ip;
    status[all] = Json::array();
    status[all].push_back(std::move(item));
  };
  addresses("hostIP", "hostIPs", state.host_ip);
  addresses("podIP", "podIPs", state.pod_ip);
  if (state.start_time != Time{}) status["startTime"] = FormatTime(state.start_time);
  if (!state.terminal_reason.empty()) status["reason"] = state.terminal_reason;
  if (!state.terminal_message.empty()) status["message"] = state.terminal_message;
  if (!state.init.empty()) {
    Json inits = Json::array();
    for (const auto& c : state.init) inits.push_back(ContainerStatusJson(c));
    status["initContainerStatuses"] = std::move(inits);
  }
  std::vector<const ContainerState*> sorted;
  for (const auto& c : state.main) sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(),
            [](const ContainerState* a, const ContainerState* b) { return a->name < b->name; });
  Json mains = Json::array();
  for (const auto* c : sorted) mains.push_back(ContainerStatusJson(*c));
  status["containerStatuses"] = std::move(mains);
  return status;
}

}  // namespace pjemu::kubelet
