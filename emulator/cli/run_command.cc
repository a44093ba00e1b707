// `pjemu run -f FILE... [--timeout D] [--image-map F] [--gpus N] [--gpu-sharing N] [--dataset-dir
// D] [--output-dir D]
// [--all-logs] [--output json]`: the one-command path. Validates every manifest (exit 2, nothing
// started), starts an embedded cluster in real time with real processes, submits every object
// (ConfigMaps, Secrets, claims and storage before the jobs: CreationRank), shows live
// progress, and exits 0 when every job Succeeded, 1 when one Failed, 3 on timeout, 130 on
// Ctrl-C. The cluster is stopped (every process reaped) before any exit.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>
#include <thread>

#include "emulator/api/pytorchjob.h"
#include "emulator/api/workload.h"
#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/install_paths.h"
#include "emulator/cli/job_view.h"
#include "emulator/cli/run_monitor.h"
#include "emulator/cli/signals.h"
#include "emulator/cluster/cluster.h"
#include "emulator/common/strings.h"

namespace pjemu::cli {
namespace {

struct RunFlags {
  std::vector<std::string> files;
  std::string timeout = "0";
  cluster::ClusterOptions cluster;
  std::string output_dir;
  bool all_logs = false;
  std::string output;
};

int Fail(ExitCode code, const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return static_cast<int>(code);
}

// Everything checked before anything starts (exit 2, nothing started): the timeout, the
// manifests and the cluster options. Returns the exit code on a failure.
std::optional<int> CheckInputs(RunFlags& flags, Duration* timeout,
                               std::vector<manifest::Manifest>* inputs) {
  if (flags.timeout != "0") {
    auto d = ParseDuration(flags.timeout);
    if (!d || *d <= Duration::zero()) {
      return Fail(ExitCode::kInvalidInput, "--timeout: invalid duration \"" + flags.timeout +
                                               "\" (use e.g. 90s, 10m, 1h30m; 0 = none)");
    }
    *timeout = *d;
  }
  auto loaded = LoadInputs(flags.files);
  if (!loaded.ok()) return Fail(ExitCode::kInvalidInput, loaded.status().message());
  for (const manifest::Manifest& m : *loaded) {
    Status s = CheckManifest(m);
    if (!s.ok()) return Fail(ExitCode::kInvalidInput, s.message());
  }
  *inputs = std::move(*loaded);
  flags.cluster.state_dir = flags.output_dir;
  if (flags.cluster.trainer_path.empty()) flags.cluster.trainer_path = DefaultTrainerPath();
  flags.cluster.builtin_image_map = DefaultImageMap();
  flags.cluster.keep_state_dir = !flags.output_dir.empty();
  if (Status s = flags.cluster.Validate(); !s.ok()) {
    return Fail(ExitCode::kInvalidInput, s.message());
  }
  return std::nullopt;
}

// Starts the cluster and fails fast on images the kubelet could never run (the seeds'
// "<training image>"). Returns the exit code on a failure, the cluster stopped.
std::optional<int> StartCluster(cluster::Cluster& cluster,
                                const std::vector<manifest::Manifest>& inputs) {
  if (Status s = cluster.Start(); !s.ok()) {
    cluster.Stop();
    return Fail(s.code() == Code::kInvalid ? ExitCode::kInvalidInput : ExitCode::kFailed,
                "cannot start the cluster: " + s.message());
  }
  for (const manifest::Manifest& m : inputs) {
    auto type = TypeOf(m);
    if (!type.ok() || !(*type)->workload) continue;
    if (Status s = cluster.CheckImages(**type, m.object); !s.ok()) {
      cluster.Stop();
      int line = s.details().is_object() ? m.LineOf(s.details().value("field", "")) : m.line;
      return Fail(ExitCode::kInvalidInput,
                  m.source + ":" + std::to_string(line) + ": " + s.message());
    }
  }
  return std::nullopt;
}

// The order `run` creates what a file carries, as a user would apply it: what pods refer to
// (namespaces, storage, ConfigMaps, Secrets, claims) before the jobs (of any job kind) that make
// the pods; the rest in file order between them.
int CreationRank(const api::ResourceType& type) {
  static const std::vector<const api::ResourceType*> kFirst = {
      &api::Namespaces(), &api::StorageClasses(), &api::PersistentVolumes(),
      &api::ConfigMaps(), &api::Secrets(),        &api::PersistentVolumeClaims()};
  for (std::size_t i = 0; i < kFirst.size(); ++i) {
    if (*kFirst[i] == type) return static_cast<int>(i);
  }
  return type.workload ? static_cast<int>(kFirst.size()) + 1 : static_cast<int>(kFirst.size());
}

std::vector<const manifest::Manifest*> InCreationOrder(
    const std::vector<manifest::Manifest>& inputs) {
  std::vector<const manifest::Manifest*> out;
  for (const manifest::Manifest& m : inputs) out.push_back(&m);
  auto rank = [](const manifest::Manifest* m) {
    auto type = TypeOf(*m);
    return type.ok() ? CreationRank(**type) : 0;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto* a, const auto* b) { return rank(a) < rank(b); });
  return out;
}

// Creates every object (InCreationOrder); the jobs join the monitor. Returns the exit
// code on a failure, the cluster stopped.
std::optional<int> Submit(cluster::Cluster& cluster, const std::vector<manifest::Manifest>& inputs,
                          RunMonitor& monitor, Terminal& term, bool json) {
  for (const manifest::Manifest* input : InCreationOrder(inputs)) {
    const manifest::Manifest& m = *input;
    auto type = TypeOf(m);
    std::string ns =
        (*type)->namespaced ? m.object["metadata"].value("namespace", "default") : std::string();
    auto created = cluster.client().Create(**type, ns, m.object);
    if (!created.ok()) {
      cluster.Stop();
      Code c = created.status().code();
      return Fail(c == Code::kInvalid || c == Code::kForbidden || c == Code::kBadRequest ||
                          c == Code::kAlreadyExists
                      ? ExitCode::kInvalidInput
                      : ExitCode::kFailed,
                  m.source + ":" + std::to_string(m.line) + ": " + created.status().message());
    }
    if (!(*type)->workload) continue;
    monitor.AddJob(**type, *created);
    if (!json) {
      const Json& meta = (*created)["metadata"];
      term.Line(term.Paint(AsciiLower((*type)->kind) + " " + meta.value("namespace", "") + "/" +
                               meta.value("name", ""),
                           Color::kBold) +
                " submitted");
    }
  }
  return std::nullopt;
}

// How the wait for the jobs ended.
struct WaitOutcome {
  ExitCode exit = ExitCode::kOk;
  Status image_error;  // a pod stuck on an image that cannot be mapped
  std::vector<JobSummary> summaries;
};

// How long a finished job's pods that still run are waited for (their last output), as on a
// cluster, where a worker finishes after the master made the job Succeeded (cleanPodPolicy
// None) and its log is complete afterwards.
constexpr Duration kSettleTime = std::chrono::seconds(5);

// Polls the monitor until every job finished (and its pods ended, for at most kSettleTime), an
// image error, a stop signal or the timeout.
WaitOutcome WaitForJobs(Clock& clock, RunMonitor& monitor, Duration timeout) {
  WaitOutcome out;
  const Time start = clock.Now();
  std::optional<Time> finished_at;
  while (true) {
    out.image_error = monitor.Poll(clock.Now());
    if (!out.image_error.ok()) {
      out.exit = ExitCode::kInvalidInput;
      break;
    }
    if (monitor.AllFinished()) {
      if (!finished_at) finished_at = clock.Now();
      if (!monitor.AnyPodActive() || clock.Now() - *finished_at >= kSettleTime) break;
    }
    if (StopSignal() != 0) {
      out.exit = ExitCode::kInterrupted;
      break;
    }
    if (timeout > Duration::zero() && clock.Now() - start >= timeout) {
      out.exit = ExitCode::kTimeout;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  (void)monitor.Poll(clock.Now());
  monitor.Flush();
  out.summaries = monitor.Summaries(clock.Now());
  if (out.exit == ExitCode::kOk) {
    for (const JobSummary& s : out.summaries) {
      if (!s.succeeded) out.exit = ExitCode::kFailed;
    }
  }
  return out;
}

// The end for people: errors on stderr, each job's conditions, then the summary table with its
// conditions coloured.
void PrintSummary(const RunFlags& flags, const WaitOutcome& outcome, Terminal& term) {
  if (!outcome.image_error.ok()) std::cerr << "error: " << outcome.image_error.message() << "\n";
  if (outcome.exit == ExitCode::kTimeout) {
    std::cerr << "error: timed out after " << flags.timeout << " waiting for the jobs to finish\n";
  }
  term.Line("");
  for (const JobSummary& s : outcome.summaries) {
    // namespace/name: two jobs of one name in two namespaces stay apart.
    term.Line(term.Paint(s.kind + " " + s.ns + "/" + s.name, Color::kBold) + " conditions:");
    for (const Json& c : s.conditions) {
      term.Line(fmt::format("  {:<11} {:<6} {:<24} {}", c.value("type", ""), c.value("status", ""),
                            c.value("reason", ""), c.value("message", "")));
    }
  }
  term.Line("");
  std::string table = RenderSummaryTable(outcome.summaries, [&term](const std::string& condition) {
    return term.Paint(condition, ColorFor(condition));
  });
  std::size_t start = 0, nl;
  while ((nl = table.find('\n', start)) != std::string::npos) {
    term.Line(std::string_view(table).substr(start, nl - start));
    start = nl + 1;
  }
  if (flags.cluster.keep_state_dir) term.Line("logs and metrics: " + flags.output_dir);
}

int RunJobs(RunFlags flags) {
  Duration timeout{0};
  std::vector<manifest::Manifest> inputs;
  if (auto failed = CheckInputs(flags, &timeout, &inputs)) return *failed;

  bool json = flags.output == "json";
  Terminal term = Terminal::ForStdout();
  InstallStopSignals();
  cluster::Cluster cluster(flags.cluster);
  if (auto failed = StartCluster(cluster, inputs)) return *failed;
  MonitorOptions mo;
  mo.all_logs = flags.all_logs;
  mo.quiet = json;
  mo.show_nodes = !flags.cluster.nodes.empty() || flags.cluster.node_count > 1;
  mo.metrics_path = [&cluster](const Json& pod) { return cluster.MetricsPath(pod); };
  RunMonitor monitor(cluster.client(), cluster.logs(), term, mo);
  if (!json) {
    std::string nodes = flags.cluster.node_name;
    if (!flags.cluster.nodes.empty() || flags.cluster.node_count > 1) {
      nodes.clear();
      for (const auto& n : cluster::ResolveNodes(flags.cluster, 0))
        nodes += (nodes.empty() ? "" : ", ") + n.name;
    }
    term.Line(fmt::format("pjemu: cluster started (node{} {}, logs in {})",
                          nodes.find(',') == std::string::npos ? "" : "s", nodes,
                          cluster.state_dir()));
  }
  if (auto failed = Submit(cluster, inputs, monitor, term, json)) return *failed;

  WaitOutcome outcome = WaitForJobs(cluster.clock(), monitor, timeout);
  if (!json && outcome.exit == ExitCode::kInterrupted) {
    term.Line(fmt::format("pjemu: interrupted (signal {}), stopping the cluster", StopSignal()));
  }
  cluster.Stop();
  int code = static_cast<int>(outcome.exit);
  if (json) {
    Json out = SummaryJson(outcome.summaries, code);
    if (!outcome.image_error.ok()) out["error"] = outcome.image_error.message();
    std::cout << out.dump(2) << "\n";
    return code;
  }
  PrintSummary(flags, outcome, term);
  return code;
}

}  // namespace

void AddSandboxOption(CLI::App& command, cluster::ClusterOptions& options) {
  using Sandbox = kubelet::KubeletOptions::Sandbox;
  static const std::map<std::string, Sandbox> kModes = {
      {"auto", Sandbox::kAuto}, {"on", Sandbox::kOn}, {"off", Sandbox::kOff}};
  command
      .add_option("--sandbox", options.sandbox,
                  "each container in a filesystem of its own (volumes, image files, private "
                  "/tmp): auto (when root), on, off (ClusterOptions::sandbox)")
      ->transform(CLI::CheckedTransformer(kModes, CLI::ignore_case).description("{auto,on,off}"))
      ->default_str("auto");
}

void SetupRun(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  command.add_option("-f,--filename", flags->files, "manifest file(s) (YAML or JSON; - for stdin)")
      ->required();
  command.add_option("--timeout", flags->timeout,
                     "give up (exit 3) after this long, e.g. 10m; 0 = wait forever");
  command.add_option("--image-map", flags->cluster.image_map,
                     "your image map, layered over the built-in fixtures/images.yaml (its "
                     "entries win; ClusterOptions::image_map)");
  AddImageStoreOption(command, flags->cluster);
  AddClusterShapeOptions(command, flags->cluster);
  command.add_option("--gpus", flags->cluster.gpus,
                     "GPUs of the node (ClusterOptions::gpus; default: detected)");
  command
      .add_option("--gpu-sharing", flags->cluster.gpu_sharing,
                  "advertise each GPU N times, as the NVIDIA device plugin's time-slicing "
                  "(ClusterOptions::gpu_sharing)")
      ->check(CLI::PositiveNumber);
  command.add_option(
      "--dataset-dir", flags->cluster.dataset_dir,
      "FashionMNIST directory for mapped trainer images (ClusterOptions::dataset_dir)");
  command.add_option("--output-dir", flags->output_dir,
                     "keep pod logs and trainer metrics here (ClusterOptions::state_dir)");
  command.add_option("--data-dir", flags->cluster.data_dir,
                     "persist the cluster (store, logs, trainer output) here "
                     "(ClusterOptions::data_dir; default: in memory)");
  AddSandboxOption(command, flags->cluster);
  command.add_flag("--all-logs", flags->all_logs, "stream every pod's log, not only the master's");
  command.add_option("-o,--output", flags->output, "json: one JSON summary on stdout")
      ->check(CLI::IsMember({"json"}));
  command.footer(
      "\nExamples:\n  pjemu run -f fixtures/seeds/pytorch-simple.yaml\n"
      "  pjemu run -f fixtures/seeds/pytorch_job_mnist_nccl.yaml \\\n"
      "      --image-map fixtures/image-maps/seed-nccl-on-cpu.yaml --timeout 15m\n"
      "\nExit codes: 0 all Succeeded, 1 a job Failed, 2 invalid input, 3 timeout, 130 "
      "interrupted.");
  command.callback([flags, &exit_code] { exit_code = RunJobs(*flags); });
}

}  // namespace pjemu::cli
