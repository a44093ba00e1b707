// RunMonitor: the live view of `pjemu run`. Polled from the command's main thread, it reads the
// jobs and their pods through the cluster's Client, prints one status line per replica when its
// phase or restarts change and each job condition as it changes, streams the master's log (or
// every pod's) prefixed by the pod name, follows the trainer's metrics file for the epoch bar
// and last loss, and finally builds the summary rows.
// Thread safety: one thread (the command's); the Client and PodLogs are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/logs.h"
#include "emulator/api/resources.h"
#include "emulator/cli/log_tailer.h"
#include "emulator/cli/summary_table.h"
#include "emulator/cli/terminal.h"
#include "emulator/cli/training_progress.h"
#include "emulator/client/client.h"

namespace pjemu::cli {

struct MonitorOptions {
  bool all_logs = false;  // stream every pod's log, not only the master's
  bool quiet = false;     // --output json: print nothing while running
  bool show_nodes = false;  // several nodes: each pod line names its node once it has one
  // The trainer's metrics file of a pod ("" = none known); set by the cluster wiring.
  std::function<std::string(const Json& pod)> metrics_path;
};

class RunMonitor {
 public:
  RunMonitor(client::Client& client, api::PodLogs& logs, Terminal& term, MonitorOptions options);

  // Starts tracking a submitted job of a job kind (its stored form, as Create returned it).
  void AddJob(const api::ResourceType& type, const Json& job);
  // One polling pass. Returns kInvalid when a pod is stuck on an image that cannot be mapped
  // (ErrImagePull/InvalidImageName: the message says how to map it), OK otherwise.
  Status Poll(Time now);
  // Every tracked job has finished (api::WorkloadState::finished).
  bool AllFinished() const;
  // A container of a tracked job's pods was running at the last Poll (a worker still ending
  // after its job succeeded: its last lines are still to come).
  bool AnyPodActive() const;
  // One row per job, in submission order.
  std::vector<JobSummary> Summaries(Time now) const;
  // Reads what is left of the logs (after the last Poll).
  void Flush();

 private:
  struct PodState {
    std::string status;
    std::int64_t restarts = -1;
    std::string hold;  // PodHoldMessage, printed when it changes
    std::string node;  // spec.nodeName (with show_nodes)
    LogTailer log;
    LogTailer metrics;
    bool stream_log = false;
    bool active = false;  // a container running at the last Poll
  };
  struct TrackedJob {
    const api::ResourceType* type = nullptr;
    std::string ns;
    std::string name;
    Json job;
    std::string last_state;  // the state and reason as printed last
    TrainingProgress progress;
    std::map<std::string, PodState> pods;  // by pod name
    std::int64_t restarts = 0;
  };

  void PollJob(TrackedJob& js, Time now, Status* image_error);
  void PrintLogs(TrackedJob& js, PodState& ps, const std::string& pod_name);
  void UpdateLive();

  client::Client& client_;
  api::PodLogs& logs_;
  Terminal& term_;
  MonitorOptions options_;
  std::vector<std::unique_ptr<TrackedJob>> jobs_;
};

}  // namespace pjemu::cli
