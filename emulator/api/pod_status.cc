#include "emulator/api/pod_status.h"

#include <optional>

#include "emulator/api/json_fields.h"

namespace pjemu::api {
namespace {

bool NonZeroSignal(const Json& terminated) {
  const Json& signal = Field(terminated, "signal");
  return signal.is_number() && signal != 0;
}

// The reason of the first init container that has not completed; nullopt when all completed.
std::optional<std::string> InitContainerReason(const Json& pod) {
  const Json& init = Field(Field(pod, "status"), "initContainerStatuses");
  const Json& specs = Field(Field(pod, "spec"), "initContainers");
  const std::size_t total = specs.is_array() ? specs.size() : 0;
  for (std::size_t i = 0; i < ArrayOr(init).size(); ++i) {
    const Json& state = Field(init[i], "state");
    const Json& term = Field(state, "terminated");
    const Json& wait = Field(state, "waiting");
    if (term.is_object() && Field(term, "exitCode") == 0) continue;
    if (term.is_object()) {
      if (!Str(term, "reason").empty()) return "Init:" + Str(term, "reason");
      if (NonZeroSignal(term)) return "Init:Signal:" + Field(term, "signal").dump();
      return "Init:ExitCode:" + Field(term, "exitCode").dump();
    }
    if (wait.is_object() && !Str(wait, "reason").empty() &&
        Str(wait, "reason") != "PodInitializing") {
      return "Init:" + Str(wait, "reason");
    }
    return "Init:" + std::to_string(i) + "/" + std::to_string(total);
  }
  return std::nullopt;
}

// The containers' reason over `reason` (kubectl walks them last to first, so the first
// container with a waiting or terminated state wins).
std::string ContainerReason(const Json& pod, std::string reason) {
  bool has_running = false;
  const Json& statuses = ArrayOr(Field(Field(pod, "status"), "containerStatuses"));
  for (std::size_t n = statuses.size(); n > 0; --n) {
    const Json& c = statuses[n - 1];
    const Json& state = Field(c, "state");
    const Json& wait = Field(state, "waiting");
    const Json& term = Field(state, "terminated");
    if (wait.is_object() && !Str(wait, "reason").empty()) {
      reason = Str(wait, "reason");
    } else if (term.is_object() && !Str(term, "reason").empty()) {
      reason = Str(term, "reason");
    } else if (term.is_object()) {
      reason = NonZeroSignal(term) ? "Signal:" + Field(term, "signal").dump()
                                   : "ExitCode:" + Field(term, "exitCode").dump();
    } else if (Field(c, "ready") == true && Field(state, "running").is_object()) {
      has_running = true;
    }
  }
  if (reason == "Completed" && has_running) reason = PodReady(pod) ? "Running" : "NotReady";
  return reason;
}

}  // namespace

bool PodReady(const Json& pod) {
  for (const auto& c : ArrayOr(Field(Field(pod, "status"), "conditions"))) {
    if (Str(c, "type") == "Ready" && Str(c, "status") == "True") return true;
  }
  return false;
}

std::string PodPhase(const Json& pod) { return Str(Field(pod, "status"), "phase"); }

bool IsPodTerminal(const Json& pod) {
  const std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

std::string PodStatusText(const Json& pod) {
  const Json& status = Field(pod, "status");
  std::string reason = Str(status, "reason").empty() ? Str(status, "phase") : Str(status, "reason");
  if (auto init = InitContainerReason(pod)) {
    reason = *init;
  } else {
    reason = ContainerReason(pod, reason);
  }
  if (!Str(Field(pod, "metadata"), "deletionTimestamp").empty()) {
    reason = Str(status, "reason") == "NodeLost" ? "Unknown" : "Terminating";
  }
  return reason;
}

}  // namespace pjemu::api
