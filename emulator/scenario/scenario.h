// Scenario: one scenarios/*.yaml file as data: the objects to create, the jobs to submit, what the
// simulated containers do, the faults to inject and when, and the expectations that must hold
// at the end. LoadScenario parses and checks it; every error names file:line and the field.
// Runner (runner.h) plays it; Expectation (expectation.h) judges the outcome.
// Thread safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/cluster/cluster_options.h"
#include "emulator/faults/injector.h"

namespace pjemu::scenario {

struct Options {
  bool virtual_time = true;  // `time: virtual|real`
  std::uint64_t seed = 1;
  Duration timeout = 30min;  // cluster time the run may take before it is stopped
  Duration settle = 0s;      // cluster time run on after every job finished (TTL, cleanup)
  int gpus = 0;  // per node
  int nodes = 1;  // `nodes: N`: pjemu-node, pjemu-node2, ... (ClusterOptions::node_count)
  std::string config;  // `config: FILE`: a kind-shaped cluster config (cluster_config.h)
  std::vector<cluster::NodeConfig> node_configs;  // config's nodes, read when the file loads
  std::string gang_scheduler_name;  // the operator's --gang-scheduler-name ("" = none)
  double backoff_scale = 1.0;
  std::string image_map = "fixtures/images.yaml";
};

// What a simulated container does; the first rule whose globs match the pod wins.
struct ProcessRule {
  int line = 0;
  std::string pod = "*";        // glob on the pod name
  std::string container = "*";  // glob on the container name
  Duration runtime = 1min;
  int exit_code = 0;
  std::vector<std::string> output;
  std::int64_t peak_memory_bytes = 0;  // reached at half the runtime; over the limit: OOMKilled
};

struct JobSource {
  int line = 0;
  std::string fixture;  // a manifest file (relative to the working directory), or
  Json inline_object;   // the object itself
};

struct Expectation {
  enum class Kind {
    kCondition,
    kConditionsSeen,
    kPod,
    kEvent,
    kEnv,
    kDuration,
    kRejected,
    kJobGone,
    kPodCount,
    kMetrics,
    kNoProcessLeft,
    kWorkloadCondition
  };
  Kind kind = Kind::kCondition;
  int line = 0;
  std::string job;                           // kCondition, kConditionsSeen, kJobGone
  std::string condition;                     // kCondition: the final condition type;
                                             // kWorkloadCondition: a True condition's type
  std::string reason, message;               // regexes ("" = any); kRejected uses message
  std::vector<std::string> seen;             // kConditionsSeen: in order (a subsequence)
  std::string pod;                           // kPod, kEnv
  std::optional<std::string> phase;          // kPod
  std::optional<int> restarts, recreations;  // kPod
  std::string restarts_bound;                // kPod: `restarts: ">= 1"` (CompareBound)
  std::optional<std::string> scheduled_reason, waiting_reason;  // kPod
  std::optional<std::string> terminated_reason;  // kPod: state or lastState terminated reason
  std::optional<bool> exists;                    // kPod
  std::string container;                         // kEnv ("" = first)
  std::string env_name, env_value;               // kEnv
  int min_count = 1;                             // kEvent (at least), kPodCount (exact, see count)
  std::optional<int> count;                      // kEvent / kPodCount exact count
  std::string selector;                          // kPodCount label selector
  Duration max_duration{0};                      // kDuration (0 = no upper bound)
  Duration min_duration{0};                      // kDuration (duration_at_least)
  // kMetrics: key (accuracy, test_loss, final_loss, steps, epochs) -> "OP NUMBER".
  std::map<std::string, std::string> metrics;
};

struct Scenario {
  std::string path;  // as given, used in every message
  std::string name;
  Options options;
  std::vector<JobSource> jobs;
  // objects: manifests of any known kind (a PodDisruptionBudget, ...), created in order before
  // the jobs, in their namespace ("default" when none; remotely the run's).
  std::vector<Json> objects;
  std::vector<ProcessRule> processes;
  std::vector<faults::FaultSpec> faults;
  std::vector<int> fault_lines;  // parallel to faults
  std::vector<Expectation> expect;
};

// Reads and checks a scenario file. kInvalid with "path:line: field: problem" for anything
// malformed (unknown keys included); kNotFound when the file cannot be read.
Result<Scenario> LoadScenario(const std::string& path);
Result<Scenario> ParseScenario(const std::string& text, const std::string& path);

}  // namespace pjemu::scenario
