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
  // The last state the watches delivered of each job ("ns/name") and pod (name), deleted ones
  // included (scenario compare puts them side by side).
  std::map<std::string, Json> last_jobs, last_pods;
  bool finished = false;                                    // every accepted job ended
  Duration duration{0};                                     // submit -> end (or the timeout)
  std::vector<std::string> fault_log;                       // "12s kill SIGKILL default/x: OK"
  // Every Event seen during the run, "ns/name" -> (reason, count): events about deleted
  // objects are gone from the store at the end.
  std::map<std::string, std::pair<std::string, int>> events;
  std::map<std::string, std::string> metrics;    // pod name -> the trainer's metrics file text
  std::map<std::string, std::string> log_tails;  // pod name -> last lines of each container
  int running_at_end = 0;                        // container processes running when it ended
  std::vector<std::string> survivors;            // process groups alive after the cluster stopped
  bool stopped = false;                          // survivors is known (the cluster has stopped)
};

// The failures (empty = passed). client reads the final state. no_process_left is judged
// only once observed.stopped (CheckProcessesLeft), the others only before.
std::vector<std::string> CheckExpectations(const Scenario& scenario, const Observed& observed,
                                           client::Client& client);
std::vector<std::string> CheckProcessesLeft(const Scenario& scenario, const Observed& observed);

// "OP NUMBER" (>=, <=, >, <, ==) against value; kInvalid for a malformed bound.
Result<bool> CompareBound(const std::string& bound, double value);

}  // namespace pjemu::scenario
