// Node reboot recovery (private to the kubelet). When pjemu restarts on a persisted store
// (`--data-dir`), the pods bound to the node still carry the status the old kubelet wrote, but
// every process died with the old server: the node rebooted. As the real kubelet does when a
// container it last saw running cannot be located (pkg/kubelet/kubelet_pods.go,
// convertToAPIContainerStatuses), each such container is reported terminated with reason
// ContainerStatusUnknown, exit code 137 and the message below, and its restartCount grows by one;
// the pod's restartPolicy then decides: Always/OnFailure run it again (lastState carries that
// termination), Never leaves it terminated and the pod Failed. Containers that had already
// finished keep their terminated state; ones in back-off start again at once.
// Logs: a pod that finished before the restart gets no worker; RememberFinishedPodLogs indexes
// its log files (kept under the data dir) from its stored status, so `logs` still finds them.
// Thread safety: RecoverAfterReboot is pure; RememberFinishedPodLogs takes ctx.logs_mu.
#pragma once

#include <string>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/kubelet/pod_state.h"
#include "emulator/kubelet/pod_worker.h"

namespace pjemu::kubelet {

inline constexpr char kRebootReason[] = "ContainerStatusUnknown";
inline constexpr char kRebootMessage[] =
    "The container could not be located when the pod was deleted.  The container used to be "
    "Running";
inline constexpr int kRebootExitCode = 137;

// Rebuilds `state` (fresh from the spec: every container waiting) from the stored status of
// `pod` as a kubelet after a reboot would. No-op for a pod whose status names no containers.
void RecoverAfterReboot(const Json& pod, PodState& state, Time now);

// Indexes the log files of a finished pod (no worker) for Kubelet::Find, unless already indexed.
void RememberFinishedPodLogs(WorkerContext& ctx, const Json& pod);

}  // namespace pjemu::kubelet
