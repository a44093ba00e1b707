// Compare: what `pjemu scenario compare` puts side by side, the outcome of one scenario on the
// embedded cluster and on a real one (remote.h), reduced to what must agree and free of what
// cannot (times, uids, resourceVersions, namespace names): each job's final condition, its
// conditions in order with reasons and messages and its replicas' counts; each pod's last phase,
// number of incarnations, labels, containers' env and restart counts; the Event reasons seen;
// which expectations held. Two outcomes agree when their summaries are equal.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "emulator/scenario/runner.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {

// Sorted lines, e.g. "job pytorch-simple: Succeeded", "job pytorch-simple condition 2: Running
// True PyTorchJobRunning \"PyTorchJob <ns>/pytorch-simple is running.\"", "pod x-worker-0:
// Succeeded, 2 uid(s)", "pod x-worker-0 container pytorch env RANK=1", "event reason Evicted",
// "expect line 14: held". Objects are named without their namespace; where a value or message
// names the namespace it reads "<ns>".
std::vector<std::string> SummarizeOutcome(const Scenario& scenario, const RunReport& report);

// The lines only one side has: "- LEFT_NAME: line" and "+ RIGHT_NAME: line", in order; empty
// when the summaries agree.
std::vector<std::string> DiffSummaries(const std::vector<std::string>& left,
                                       const std::vector<std::string>& right,
                                       const std::string& left_name,
                                       const std::string& right_name);

}  // namespace pjemu::scenario
