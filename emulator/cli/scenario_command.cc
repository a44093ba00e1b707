// `pjemu scenario run FILE... [--junit F] [--output-dir D] [--image-map F]`: plays scenario files
// (scenarios/README.md) with emulator/scenario's runner, prints each one's timeline and
// failures, writes one HTML report per file into --output-dir and, with --junit, JUnit XML with
// one testcase per file. Exit 0 when every scenario passed, 1 when one failed, 2 when one could
// not be loaded or set up. Real-time scenarios (options.time: real) keep their pod logs and
// trainer metrics in --output-dir/<file stem>/. With --kubeconfig (or --context, --server) the
// files run on that cluster instead, each in a namespace of its own (scenario_remote.h); those
// that need the emulator are skipped with their reason ("FILE: skipped: REASON", JUnit
// <skipped>). A kubeconfig or server that does not work is one line and exit 2.
// `pjemu scenario compare FILE... --kubeconfig K` runs each file on K and on the embedded cluster
// and prints where their outcomes differ (scenario/compare.h): exit 0 when all agree.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/image/store.h"
#include "emulator/cli/install_paths.h"
#include "emulator/cli/scenario_remote.h"
#include "emulator/cli/signals.h"
#include "emulator/cli/terminal.h"
#include "emulator/scenario/compare.h"
#include "emulator/scenario/report.h"

namespace pjemu::cli {
namespace {

struct ScenarioFlags {
  std::vector<std::string> files;
  std::string junit;
  std::string output_dir = "scenario-reports";
  std::string image_map;
  std::string image_store = image::ImageStore::DefaultRoot();
  std::string dataset_dir;
  RemoteFlags remote;  // --kubeconfig, --context, -n (the namespaces' prefix), ...
  bool IsRemote() const {
    return !remote.kubeconfig.empty() || !remote.context.empty() || !remote.server.empty();
  }
};

// "scenarios/worker-killed.yaml" -> "worker-killed.html" (the report's file name).
std::string ReportName(const std::string& path) {
  return std::filesystem::path(path).stem().string() + ".html";
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path.string());
  return Status::Ok();
}

// The image map a scenario without `options.image_map` uses: --image-map, else the default one
// when the scenario's relative default is not there (an installed pjemu, another project).
void ApplyImageMap(scenario::Scenario& sc, const std::string& flag) {
  if (sc.options.image_map != scenario::Options{}.image_map) return;
  if (!flag.empty()) {
    sc.options.image_map = flag;
  } else if (std::error_code ec; !std::filesystem::exists(sc.options.image_map, ec)) {
    sc.options.image_map = DefaultImageMap();
  }
}

scenario::ScenarioResult RunOne(const std::string& path, const ScenarioFlags& flags) {
  scenario::ScenarioResult result;
  result.path = path;
  result.name = path;
  auto start = std::chrono::steady_clock::now();
  auto sc = scenario::LoadScenario(path);
  if (!sc.ok()) {
    result.setup = sc.status();
  } else {
    if (!sc->name.empty()) result.name = sc->name;
    ApplyImageMap(*sc, flags.image_map);
    // Real-time runs keep their pod logs and trainer metrics next to the report.
    scenario::RunSettings settings;
    settings.builtin_image_map = DefaultImageMap();
    settings.image_store = flags.image_store;
    settings.dataset_dir = flags.dataset_dir;
    if (!sc->options.virtual_time) {
      settings.output_dir =
          (std::filesystem::path(flags.output_dir) / std::filesystem::path(path).stem()).string();
    }
    auto report = scenario::RunScenario(*sc, settings);
    if (report.ok()) {
      result.report = std::move(*report);
    } else {
      result.setup = report.status();
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// The cluster of --kubeconfig/--context/--server (nullopt without them); false after printing
// the one line that says why it cannot be used.
bool OpenCluster(const ScenarioFlags& flags, std::optional<RemoteCluster>* cluster) {
  if (!flags.IsRemote()) return true;
  auto opened = OpenRemoteCluster(flags.remote);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().message() << "\n";
    return false;
  }
  cluster->emplace(std::move(*opened));
  InstallStopSignals();  // Ctrl-C ends the run early; its namespace is still deleted
  return true;
}

int RunScenarios(const ScenarioFlags& flags) {
  Terminal term = Terminal::ForStdout();
  std::vector<scenario::ScenarioResult> results;
  int rc = 0;
  std::optional<RemoteCluster> cluster;
  if (!OpenCluster(flags, &cluster)) return static_cast<int>(ExitCode::kInvalidInput);
  for (const std::string& path : flags.files) {
    scenario::ScenarioResult r = cluster ? RunRemoteFile(*cluster, path) : RunOne(path, flags);
    if (!r.skipped.empty()) {
      term.Line(path + ": skipped: " + r.skipped);
      results.push_back(std::move(r));
      continue;
    }
    if (!r.setup.ok()) {
      std::cerr << r.setup.message() << "\n";
      rc = static_cast<int>(ExitCode::kInvalidInput);
    } else {
      for (const std::string& line : r.report.timeline) term.Line("  " + line);
      for (const std::string& f : r.report.failures) std::cerr << f << "\n";
      if (!r.report.passed && rc == 0) rc = static_cast<int>(ExitCode::kFailed);
    }
    bool passed = r.setup.ok() && r.report.passed;
    std::filesystem::path report = std::filesystem::path(flags.output_dir) / ReportName(path);
    if (Status s = WriteFile(report, scenario::RenderHtmlReport(r)); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      if (rc == 0) rc = static_cast<int>(ExitCode::kFailed);
    }
    term.Line(path + ": " + term.Paint(passed ? "PASS" : "FAIL", passed ? Color::kGreen : Color::kRed) +
              " (" + std::to_string(static_cast<int>(r.seconds * 1000)) + " ms; report " +
              report.string() + ")");
    results.push_back(std::move(r));
    if (cluster && StopSignal() != 0) {
      std::cerr << "interrupted\n";
      rc = static_cast<int>(ExitCode::kInterrupted);
      break;
    }
  }
  if (!flags.junit.empty()) {
    if (Status s = WriteFile(flags.junit, scenario::RenderJunit(results)); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      if (rc == 0) rc = static_cast<int>(ExitCode::kFailed);
    }
  }
  return rc;
}

// One file on both: "FILE: skipped: REASON", "FILE: agree", or "FILE: differ" and the lines
// only one side has. 0 agree or skipped, 1 differ, 2 a run could not be set up.
int CompareOne(RemoteCluster& cluster, const std::string& path, const ScenarioFlags& flags) {
  scenario::ScenarioResult remote = RunRemoteFile(cluster, path);
  if (!remote.skipped.empty()) {
    std::cout << path << ": skipped: " << remote.skipped << "\n";
    return 0;
  }
  scenario::ScenarioResult local =
      remote.setup.ok() && StopSignal() == 0 ? RunOne(path, flags) : scenario::ScenarioResult{};
  auto sc = scenario::LoadScenario(path);
  for (const Status& s : {remote.setup, local.setup, sc.status()}) {
    if (!s.ok()) {
      std::cerr << s.message() << "\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
  }
  std::vector<std::string> diff = scenario::DiffSummaries(
      scenario::SummarizeOutcome(*sc, local.report),
      scenario::SummarizeOutcome(*sc, remote.report), "emulator", "cluster");
  std::filesystem::path report =
      std::filesystem::path(flags.output_dir) / ("compare-" + ReportName(path));
  if (Status s = WriteFile(report, scenario::RenderCompareReport(local, remote, diff)); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return static_cast<int>(ExitCode::kFailed);
  }
  std::cout << path << ": " << (diff.empty() ? "agree" : "differ") << " (report "
            << report.string() << ")\n";
  for (const std::string& line : diff) std::cout << "  " << line << "\n";
  return diff.empty() ? 0 : static_cast<int>(ExitCode::kFailed);
}

int CompareScenarios(const ScenarioFlags& flags) {
  if (!flags.IsRemote()) {
    std::cerr << "error: scenario compare needs the cluster: --kubeconfig, --context or --server\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::optional<RemoteCluster> cluster;
  if (!OpenCluster(flags, &cluster)) return static_cast<int>(ExitCode::kInvalidInput);
  int rc = 0;
  for (const std::string& path : flags.files) {
    int one = CompareOne(*cluster, path, flags);
    if (StopSignal() != 0) return static_cast<int>(ExitCode::kInterrupted);
    rc = std::max(rc, one);
  }
  return rc;
}

// The flags `run` and `compare` share: the files, where reports and logs go, the image map and
// data set of embedded runs, and the cluster of remote ones.
void AddScenarioFlags(CLI::App* command, ScenarioFlags* flags) {
  command->add_option("files", flags->files, "scenario YAML files (scenarios/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--output-dir", flags->output_dir,
                      "write one HTML report per file here (default scenario-reports)");
  command->add_option("--image-store", flags->image_store,
                      "the node's image store (\"\" = image maps only)")
      ->capture_default_str();
  command->add_option("--image-map", flags->image_map,
                      "image map for scenarios that name none, layered over the built-in one "
                      "(default: the built-in fixtures/images.yaml, else the installed one)");
  command->add_option("--dataset-dir", flags->dataset_dir,
                      "FashionMNIST directory for real-time scenarios' trainer (default: its own)");
  AddRemoteFlags(*command, &flags->remote);
  command->get_option("--kubeconfig")
      ->description("run on the cluster this kubeconfig names, through its API (without it, "
                    "--context or --server: the embedded cluster)");
  command->get_option("--namespace")
      ->description("remote runs: the prefix of each scenario's namespace (default pjemu)");
}

}  // namespace

void SetupScenario(CLI::App& command, int& exit_code) {
  command.require_subcommand(1);
  CLI::App* run = command.add_subcommand("run", "run scenario files and judge their expectations");
  auto flags = std::make_shared<ScenarioFlags>();
  AddScenarioFlags(run, flags.get());
  run->add_option("--junit", flags->junit, "write JUnit XML here (one testcase per file)");
  run->footer(
      "\nExamples:\n  pjemu scenario run scenarios/*.yaml --junit out/junit.xml --output-dir out\n"
      "  pjemu scenario run scenarios/exitcode-137-retried.yaml\n"
      "  pjemu scenario run scenarios/*-real.yaml --kubeconfig ~/.kube/config --context prod\n"
      "\nWith --kubeconfig (or --context, --server) the scenarios run on that cluster, each in a "
      "namespace of its own (-n: its prefix, default pjemu) that is deleted afterwards; those "
      "that need the emulator are skipped with their reason.");
  run->callback([flags, &exit_code] { exit_code = RunScenarios(*flags); });

  CLI::App* compare = command.add_subcommand(
      "compare", "run scenario files on the embedded cluster and on a real one, print where "
                 "they differ");
  auto cflags = std::make_shared<ScenarioFlags>();
  AddScenarioFlags(compare, cflags.get());
  compare->footer(
      "\nEach file runs on the cluster (--kubeconfig, as `run` does) and on the embedded one; "
      "their outcomes are compared without times, uids, resourceVersions or namespace names: "
      "each job's final condition, each pod's last phase and number of incarnations, the Event "
      "reasons seen, which expectations held. Exit 0 when every file agrees (or is skipped), 1 "
      "when one differs, 2 when one could not run.\n\nExample:\n"
      "  pjemu scenario compare scenarios/oom-real.yaml --kubeconfig ~/.kube/config");
  compare->callback([cflags, &exit_code] { exit_code = CompareScenarios(*cflags); });
}

}  // namespace pjemu::cli
