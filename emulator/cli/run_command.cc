// `pjemu run -f FILE... [--timeout D] [--image-map F] [--gpus N] [--dataset-dir D] [--output-dir D]
// [--all-logs] [--output json]`: the one-command path. Validates every manifest (exit 2, nothing
// started), starts an embedded cluster in real time with real processes, submits, shows live
// progress, and exits 0 when every job Succeeded, 1 when one Failed, 3 on timeout, 130 on
// Ctrl-C. The cluster is stopped (every process reaped) before any exit.
#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/job_view.h"
#include "emulator/cli/run_monitor.h"
#include "emulator/cli/signals.h"
#include "emulator/cli/install_paths.h"
#include "emulator/cluster/cluster.h"

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

int RunJobs(RunFlags flags) {
  Duration timeout{0};
  if (flags.timeout != "0") {
    auto d = ParseDuration(flags.timeout);
    if (!d || *d <= Duration::zero()) {
      return Fail(ExitCode::kInvalidInput, "--timeout: invalid duration \"" + flags.timeout +
                                               "\" (use e.g. 90s, 10m, 1h30m; 0 = none)");
    }
    timeout = *d;
  }
  auto inputs = LoadInputs(flags.files);
  if (!inputs.ok()) return Fail(ExitCode::kInvalidInput, inputs.status().message());
  for (const manifest::Manifest& m : *inputs) {
    Status s = CheckManifest(m);
    if (!s.ok()) return Fail(ExitCode::kInvalidInput, s.message());
  }
  flags.cluster.state_dir = flags.output_dir;
  if (flags.cluster.trainer_path.empty()) flags.cluster.trainer_path = DefaultTrainerPath();
  if (flags.cluster.image_map.empty()) flags.cluster.image_map = DefaultImageMap();
  flags.cluster.keep_state_dir = !flags.output_dir.empty();
  if (Status s = flags.cluster.Validate(); !s.ok()) {
    return Fail(ExitCode::kInvalidInput, s.message());
  }

  bool json = flags.output == "json";
  Terminal term = Terminal::ForStdout();
  InstallStopSignals();
  cluster::Cluster cluster(flags.cluster);
  if (Status s = cluster.Start(); !s.ok()) {
    cluster.Stop();
    return Fail(s.code() == Code::kInvalid ? ExitCode::kInvalidInput : ExitCode::kFailed,
                "cannot start the cluster: " + s.message());
  }
  // Fail fast on images the kubelet could never run (the seeds' "<training image>").
  for (const manifest::Manifest& m : *inputs) {
    if (auto type = TypeOf(m); !type.ok() || !(**type == api::PyTorchJobs())) continue;
    if (Status s = cluster.CheckImages(m.object); !s.ok()) {
      cluster.Stop();
      int line = s.details().is_object() ? m.LineOf(s.details().value("field", "")) : m.line;
      return Fail(ExitCode::kInvalidInput,
                  m.source + ":" + std::to_string(line) + ": " + s.message());
    }
  }

  MonitorOptions mo;
  mo.all_logs = flags.all_logs;
  mo.quiet = json;
  mo.metrics_path = [&cluster](const Json& pod) { return cluster.MetricsPath(pod); };
  RunMonitor monitor(cluster.client(), cluster.logs(), term, mo);
  if (!json) {
    term.Line(fmt::format("pjemu: cluster started (node {}, logs in {})", flags.cluster.node_name,
                          cluster.state_dir()));
  }
  for (const manifest::Manifest& m : *inputs) {
    auto type = TypeOf(m);
    std::string ns = m.object["metadata"].value("namespace", "default");
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
    if (**type == api::PyTorchJobs()) {
      monitor.AddJob(*created);
      if (!json) {
        const Json& meta = (*created)["metadata"];
        term.Line(term.Paint("pytorchjob " + meta.value("namespace", "") + "/" +
                                 meta.value("name", ""),
                             Color::kBold) +
                  " submitted");
      }
    }
  }

  Clock& clock = cluster.clock();
  Time start = clock.Now();
  ExitCode exit = ExitCode::kOk;
  Status image_error;
  while (true) {
    image_error = monitor.Poll(clock.Now());
    if (!image_error.ok()) {
      exit = ExitCode::kInvalidInput;
      break;
    }
    if (monitor.AllFinished()) break;
    if (StopSignal() != 0) {
      exit = ExitCode::kInterrupted;
      break;
    }
    if (timeout > Duration::zero() && clock.Now() - start >= timeout) {
      exit = ExitCode::kTimeout;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  (void)monitor.Poll(clock.Now());
  monitor.Flush();
  std::vector<JobSummary> summaries = monitor.Summaries(clock.Now());
  if (exit == ExitCode::kOk) {
    for (const JobSummary& s : summaries) {
      if (s.condition != "Succeeded") exit = ExitCode::kFailed;
    }
  }
  if (!json && exit == ExitCode::kInterrupted) {
    term.Line(fmt::format("pjemu: interrupted (signal {}), stopping the cluster", StopSignal()));
  }
  cluster.Stop();

  int code = static_cast<int>(exit);
  if (json) {
    Json out = SummaryJson(summaries, code);
    if (!image_error.ok()) out["error"] = image_error.message();
    std::cout << out.dump(2) << "\n";
    return code;
  }
  if (!image_error.ok()) std::cerr << "error: " << image_error.message() << "\n";
  if (exit == ExitCode::kTimeout) {
    std::cerr << "error: timed out after " << flags.timeout << " waiting for the jobs to finish\n";
  }
  term.Line("");
  for (const JobSummary& s : summaries) {
    // namespace/name: two jobs of one name in two namespaces stay apart.
    term.Line(term.Paint("pytorchjob " + s.ns + "/" + s.name, Color::kBold) + " conditions:");
    for (const Json& c : s.conditions) {
      term.Line(fmt::format("  {:<11} {:<6} {:<24} {}", c.value("type", ""), c.value("status", ""),
                            c.value("reason", ""), c.value("message", "")));
    }
  }
  term.Line("");
  std::string table = RenderSummaryTable(summaries);
  std::size_t start_pos = 0, nl;
  while ((nl = table.find('\n', start_pos)) != std::string::npos) {
    std::string line = table.substr(start_pos, nl - start_pos);
    for (const JobSummary& s : summaries) {
      if (line.find(" " + s.condition + " ") != std::string::npos && !s.condition.empty()) {
        auto at = line.find(" " + s.condition + " ");
        line = line.substr(0, at + 1) + term.Paint(s.condition, ColorFor(s.condition)) +
               line.substr(at + 1 + s.condition.size());
        break;
      }
    }
    term.Line(line);
    start_pos = nl + 1;
  }
  if (flags.cluster.keep_state_dir) term.Line("logs and metrics: " + flags.output_dir);
  return code;
}

}  // namespace

void SetupRun(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  command.add_option("-f,--filename", flags->files, "manifest file(s) (YAML or JSON; - for stdin)")
      ->required();
  command.add_option("--timeout", flags->timeout,
                     "give up (exit 3) after this long, e.g. 10m; 0 = wait forever");
  command.add_option("--image-map", flags->cluster.image_map,
                     "image map file (ClusterOptions::image_map; default fixtures/images.yaml)");
  command.add_option("--gpus", flags->cluster.gpus,
                     "GPUs of the node (ClusterOptions::gpus; default: detected)");
  command.add_option("--dataset-dir", flags->cluster.dataset_dir,
                     "FashionMNIST directory for mapped trainer images (ClusterOptions::dataset_dir)");
  command.add_option("--output-dir", flags->output_dir,
                     "keep pod logs and trainer metrics here (ClusterOptions::state_dir)");
  command.add_option("--data-dir", flags->cluster.data_dir,
                     "persist the cluster (store, logs, trainer output) here "
                     "(ClusterOptions::data_dir; default: in memory)");
  command.add_flag("--all-logs", flags->all_logs, "stream every pod's log, not only the master's");
  command.add_option("-o,--output", flags->output, "json: one JSON summary on stdout")
      ->check(CLI::IsMember({"json"}));
  command.footer(
      "\nExamples:\n  pjemu run -f fixtures/seeds/pytorch-simple.yaml\n"
      "  pjemu run -f fixtures/seeds/pytorch_job_mnist_nccl.yaml \\\n"
      "      --image-map fixtures/image-maps/seed-nccl-on-cpu.yaml --timeout 15m\n"
      "\nExit codes: 0 all Succeeded, 1 a job Failed, 2 invalid input, 3 timeout, 130 interrupted.");
  command.callback([flags, &exit_code] { exit_code = RunJobs(*flags); });
}

}  // namespace pjemu::cli
