// A pod's phase and the STATUS text `kubectl get pods` prints for it (kubectl's printPod), over a
// pod in wire-form JSON. The API server's Table rows and the CLI's progress lines both show this
// text, so both call PodStatusText.
// Thread safety: pure functions over values.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

// status.phase ("" when absent).
std::string PodPhase(const Json& pod);
// The phase is Succeeded or Failed: the pod's containers will not run again.
bool IsPodTerminal(const Json& pod);
// podutil.IsPodReady: the pod's Ready condition is True.
bool PodReady(const Json& pod);

// kubectl's STATUS column: status.reason or the phase, overridden by the first init container
// that has not completed (Init:<reason>, Init:Signal:<n>, Init:ExitCode:<n>, Init:<i>/<total>),
// else by the containers' waiting or terminated reason (Signal:<n>, ExitCode:<n> when a
// terminated container gives none); Completed with a running container reads Running or
// NotReady after the pod's Ready condition; Terminating (Unknown for NodeLost) once
// metadata.deletionTimestamp is set.
std::string PodStatusText(const Json& pod);

}  // namespace pjemu::api
