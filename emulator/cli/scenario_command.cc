// `pjemu scenario run FILE... [--junit F] [--output-dir D] [--image-map F]`: plays scenario files
// (scenarios/README.md) with emulator/scenario's runner, prints each one's timeline and
// failures, writes one HTML report per file into --output-dir and, with --junit, JUnit XML with
// one testcase per file. Exit 0 when every scenario passed, 1 when one failed, 2 when one could
// not be loaded or set up. Real-time scenarios (options.time: real) keep their pod logs and
// trainer metrics in --output-dir/<file stem>/.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/install_paths.h"
#include "emulator/cli/terminal.h"
#include "emulator/scenario/report.h"

namespace pjemu::cli {
namespace {

struct ScenarioFlags {
  std::vector<std::string> files;
  std::string junit;
  std::string output_dir = "scenario-reports";
  std::string image_map;
  std::string dataset_dir;
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

int RunScenarios(const ScenarioFlags& flags) {
  Terminal term = Terminal::ForStdout();
  std::vector<scenario::ScenarioResult> results;
  int rc = 0;
  for (const std::string& path : flags.files) {
    scenario::ScenarioResult r = RunOne(path, flags);
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
  }
  if (!flags.junit.empty()) {
    if (Status s = WriteFile(flags.junit, scenario::RenderJunit(results)); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      if (rc == 0) rc = static_cast<int>(ExitCode::kFailed);
    }
  }
  return rc;
}

}  // namespace

void SetupScenario(CLI::App& command, int& exit_code) {
  command.require_subcommand(1);
  CLI::App* run = command.add_subcommand("run", "run scenario files and judge their expectations");
  auto flags = std::make_shared<ScenarioFlags>();
  run->add_option("files", flags->files, "scenario YAML files (scenarios/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--junit", flags->junit, "write JUnit XML here (one testcase per file)");
  run->add_option("--output-dir", flags->output_dir,
                  "write one HTML report per file here (default scenario-reports)");
  run->add_option("--image-map", flags->image_map,
                  "image map for scenarios that name none, layered over the built-in one "
                  "(default: the built-in fixtures/images.yaml, else the installed one)");
  run->add_option("--dataset-dir", flags->dataset_dir,
                  "FashionMNIST directory for real-time scenarios' trainer (default: its own)");
  run->footer(
      "\nExamples:\n  pjemu scenario run scenarios/*.yaml --junit out/junit.xml --output-dir out\n"
      "  pjemu scenario run scenarios/exitcode-137-retried.yaml");
  run->callback([flags, &exit_code] { exit_code = RunScenarios(*flags); });
}

}  // namespace pjemu::cli
