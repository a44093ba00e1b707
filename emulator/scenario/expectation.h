// Expectations: judge a finished scenario run against its expect: list. Each failure is one
// message in the ninja style, "scenarios/x.yaml:14: expected condition Succeeded, got Failed
// (reason: message)", followed by the job's condition history and the faults that fired.
// Thread safety: pure functions over the cluster state read through the given Client.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {

// What the runner saw while the scenario ran (the store only holds the end state).
struct Observed {
  std::vector<std::string> job_keys;                        // "ns/name", per submitted job
  std::vector<Status> submitted;                            // the Create result, per job
  std::map<std::string, std::vector<std::string>> history;  // job key -> conditions turned True
  std::map<std::string, std::set<std::string>> pod_uids;    // pod name -> every uid seen
  bool finished = false;                                    // every accepted job ended
  Duration duration{0};                                     // submit -> end (or the timeout)
  std::vector<std::string> fault_log;                       // "12s kill SIGKILL default/x: OK"
};

// The failures (empty = passed). client reads the final state.
std::vector<std::string> CheckExpectations(const Scenario& scenario, const Observed& observed,
                                           client::Client& client);

}  // namespace pjemu::scenario
