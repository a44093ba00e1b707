// Remote runs: the same scenario files played against a real API server (`pjemu scenario run
// --kubeconfig K`) through its public API only. ClassifyRemote says, from what a scenario uses,
// whether it can run there and, if not, why (so the answer cannot go stale); RunRemoteScenario
// plays a capable one in a namespace of its own over a client::Client (the CLI's HttpClient):
// submit, faults (delete-pod, patch-job, cordon, evict-pod and drain through the API; a drain
// sees only the run's namespace's pods, as every "all namespaces" list of the run), log
// triggers (the seams' read_log: pods/log), then the same expectations as the embedded runner
// (expectation.h), with what only the emulator knows read through the API instead: trainer
// metrics from the pods' logs (the Katib metrics-collector lines the trainer prints), "no
// process left" from the containers' states at the end. The namespace is created first and
// deleted at the end, with everything in it, whatever happened.
// Thread safety: runs on the caller's thread; the seams' functions are called on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "emulator/client/client.h"
#include "emulator/scenario/runner.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {

// Whether a scenario can run on a real cluster; reason says why not, in the form
// "emulator only: virtual time (options.time: virtual)" or "emulator only: node power: node-down
// (fault power-off)". The first reason found is given (options, processes, faults, expectations).
struct RemoteSupport {
  bool capable = true;
  std::string reason;  // "" when capable
};
RemoteSupport ClassifyRemote(const Scenario& scenario);

// The namespace a remote run uses: "<prefix>-<file stem>-<suffix>" (prefix e.g. "pjemu"), the
// stem lowered and reduced to a DNS-1123 label's characters, cut so that the whole stays within
// 63; suffix is rendered in base 36 (5 characters), e.g. from a random number, so that runs
// never collide.
std::string RemoteNamespace(const std::string& prefix, const std::string& path,
                            std::uint64_t suffix);

// The scenario moved into namespace ns: its jobs' and namespaced objects' namespaces,
// expectations' and triggers' job keys and pod faults' namespaces. kInvalid when it names more than one namespace (they would
// collide in one).
Result<Scenario> InNamespace(const Scenario& scenario, const std::string& ns);

// The trainer's metrics (its metrics file's JSON lines, the subset the log shows) rebuilt from a
// container's log: an epoch record (accuracy, test_loss) per Katib line "{metricName: accuracy,
// metricValue: A};{metricName: loss, metricValue: L}", a step record (loss, no step number)
// per "Train Epoch: E [..]\tloss=L" line.
std::string MetricsFromLog(const std::string& log);

// What a remote run reaches the cluster through.
struct RemoteSeams {
  client::Client* client = nullptr;  // the API server (not owned; outlives the run)
  // The text of a container's log so far ("" = its only/first container; "" when none yet).
  std::function<std::string(const std::string& ns, const std::string& pod,
                            const std::string& container)>
      read_log;
  // Polled while the run waits (every 200 ms): true ends it early (Ctrl-C); the expectations are
  // judged on what was seen and the namespace is deleted as always. Unset: never.
  std::function<bool()> interrupted;
};

// Plays scenario (which ClassifyRemote found capable) in namespace ns, which it creates and
// deletes. kInvalid when it cannot be moved there or a fault is refused; kUnavailable/kForbidden
// etc. (the server's answer) when the namespace cannot be created; otherwise the report.
Result<RunReport> RunRemoteScenario(const Scenario& scenario, const RemoteSeams& seams,
                                    const std::string& ns);

}  // namespace pjemu::scenario
