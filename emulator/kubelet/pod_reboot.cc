#include "emulator/kubelet/pod_reboot.h"

#include "emulator/api/json_fields.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

Time TimeAt(const Json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_string()) return Time{};
  return ParseTime(it->get<std::string>()).value_or(Time{});
}

// Restores one container from its stored status entry.
void Recover(const Json& old, bool init, const std::string& policy, ContainerState& c,
             Time now) {
  c.restart_count = old.value("restartCount", 0);
  c.image_id = old.value("imageID", "");
  const Json& state = api::ObjectOr(api::Field(old, "state"));
  const Json& last = api::ObjectOr(api::Field(old, "lastState"));
  auto restart_allowed = [&](int exit_code) {
    return init ? exit_code != 0 && policy != "Never" : ShouldRestart(policy, exit_code);
  };
  auto terminate = [&](int exit_code, const std::string& reason, const std::string& message,
                       Time started, Time finished, const std::string& id) {
    c.phase = Phase::kTerminated;
    c.exit_code = exit_code;
    c.reason = reason;
    c.message = message;
    c.started_at = started;
    c.finished_at = finished;
    c.container_id = id;
  };
  if (state.contains("running")) {
    // It died with the node: terminated, reason unknown (the kubelet's inference).
    Json gone = {{"exitCode", kRebootExitCode},
                 {"reason", kRebootReason},
                 {"message", kRebootMessage},
                 {"startedAt", nullptr},
                 {"finishedAt", nullptr}};
    ++c.restart_count;
    if (restart_allowed(kRebootExitCode)) {
      c.last_state = {{"terminated", gone}};  // waiting: Advance() starts it again
    } else {
      c.last_state = last;
      terminate(kRebootExitCode, kRebootReason, kRebootMessage,
                TimeAt(state["running"], "startedAt"), now, old.value("containerID", ""));
    }
    return;
  }
  if (state.contains("terminated")) {
    const Json& t = state["terminated"];
    int exit_code = t.value("exitCode", 0);
    if (restart_allowed(exit_code)) {
      // It was about to be restarted (back-off): it starts again now.
      ++c.restart_count;
      c.last_state = {{"terminated", t}};
    } else {
      c.last_state = last;
      terminate(exit_code, t.value("reason", ""), t.value("message", ""), TimeAt(t, "startedAt"),
                TimeAt(t, "finishedAt"), t.value("containerID", ""));
      c.signal = t.value("signal", 0);
    }
    return;
  }
  if (!last.empty()) {
    // Waiting in back-off after a termination: the restart happens now.
    ++c.restart_count;
    c.last_state = last;
  }
}

}  // namespace

void RecoverAfterReboot(const Json& pod, PodState& state, Time now) {
  const Json& status = api::Field(pod, "status");
  std::string policy = api::ObjectOr(api::Field(pod, "spec")).value("restartPolicy", "Always");
  for (bool init : {true, false}) {
    auto& containers = init ? state.init : state.main;
    for (const Json& old :
         api::ArrayOr(api::Field(status, init ? "initContainerStatuses" : "containerStatuses"))) {
      if (!old.is_object()) continue;
      for (auto& c : containers) {
        if (c.name == old.value("name", "")) Recover(old, init, policy, c, now);
      }
    }
  }
}

void RememberFinishedPodLogs(WorkerContext& ctx, const Json& pod) {
  const Json& meta = api::ObjectOr(api::Field(pod, "metadata"));
  std::string ns = meta.value("namespace", "default"), name = meta.value("name", "");
  std::lock_guard<std::mutex> lock(ctx.logs_mu);
  if (ctx.logs.count(ns + "/" + name)) return;
  PodLogInfo info;
  info.dir = ctx.options.root_dir + "/pods/" + ns + "_" + name + "_" + meta.value("uid", "");
  const Json& status = api::Field(pod, "status");
  for (bool init : {true, false}) {
    for (const Json& s :
         api::ArrayOr(api::Field(status, init ? "initContainerStatuses" : "containerStatuses"))) {
      if (!s.is_object()) continue;
      ContainerLogInfo c;
      c.name = s.value("name", "");
      c.restart_count = s.value("restartCount", 0);
      c.ever_started = api::ObjectOr(api::Field(s, "state")).contains("terminated");
      c.waiting_reason = "PodInitializing";
      (init ? info.init : info.main).push_back(c);
    }
  }
  ctx.logs[ns + "/" + name] = std::move(info);
}

}  // namespace pjemu::kubelet
