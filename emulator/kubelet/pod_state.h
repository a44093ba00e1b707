// The kubelet's record of a pod's containers (what a container runtime would report), and the
// pure functions that turn it into the pod's .status the way the real kubelet does
// (pkg/kubelet/kubelet_pods.go: getPhase, generateAPIPodStatus, convertToAPIContainerStatuses;
// pkg/kubelet/status/generate.go for the conditions).
// Thread safety: plain data and pure functions; the kubelet uses them on the EventLoop thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/event_loop.h"
#include "emulator/common/status.h"
#include "emulator/image/store.h"
#include "emulator/process/process_runner.h"

namespace pjemu::kubelet {

struct ContainerState {
  enum class Phase { kWaiting, kRunning, kTerminated };
  std::string name;
  std::string image;
  std::string image_id;  // "pjemu://<normalized image>" (a map's), repo@sha256:... (the store's)
  std::string status_image;  // status.image when it differs from the spec's (a stored name)
  std::string route;         // how the image was resolved ("image map F:L", "image store (pull)")
  Phase phase = Phase::kWaiting;
  std::string reason = "ContainerCreating";  // waiting or terminated reason
  std::string message;
  int exit_code = 0;
  int signal = 0;
  Time started_at{};
  Time finished_at{};
  std::string container_id;  // "pjemu://<pod uid>-<name>-<restartCount>"
  int restart_count = 0;
  Json last_state = Json::object();  // {"terminated": {...}} of the previous instance, or {}
  // Runtime bookkeeping, not reported.
  process::Pid pid = 0;          // the running process (0: none)
  EventLoop::TimerId timer = 0;  // pending restart / pull / builtin poll
  std::string builtin_service;   // wait-for-service: the name looked up
  int builtin_tries = 0;         // wait-for-service attempts so far
  int builtin_max_tries = 0;
  int address_waits = 0;  // launches held for MASTER_ADDR to resolve
  bool pulling = false;   // a pull of its image is queued or running (ImagePulls)
  bool map_pulled = false;  // a mapped image's simulated pull just ended (its Pulled is sent)
  std::optional<image::ImageRecord> pulled;  // the image a finished pull brought, for the start
  // How the running process was started, for exec: its environment, working directory and
  // whether it has the sandbox's namespaces.
  std::vector<std::string> env;
  std::string working_dir;
  bool sandboxed = false;
};

struct PodState {
  std::vector<ContainerState> init;
  std::vector<ContainerState> main;
  std::string pod_ip;
  std::string host_ip;
  Time start_time{};
  // Once Succeeded or Failed a pod's phase never changes (the kubelet's rule).
  std::string terminal_phase;
  std::string terminal_reason;  // e.g. "Evicted" / "DeadlineExceeded" (unused by default)
  std::string terminal_message;
};

// The terminated-state JSON of a container instance ({exitCode, reason, startedAt, ...}).
Json TerminatedJson(const ContainerState& c);
// One element of status.containerStatuses / initContainerStatuses.
Json ContainerStatusJson(const ContainerState& c);

// Phase from the container states and spec.restartPolicy (getPhase).
std::string ComputePhase(const PodState& state, const std::string& restart_policy);

// Whether a container that exited with exit_code is restarted in place.
bool ShouldRestart(const std::string& restart_policy, int exit_code);

// The complete .status for pod (its stored JSON: spec and current status) from state at now.
// Conditions the kubelet does not own (PodScheduled, DisruptionTarget, ...) are kept from the
// stored status; lastTransitionTime changes only when a condition's status does.
Json ComputePodStatus(const Json& pod, const PodState& state, Time now);

}  // namespace pjemu::kubelet
