// scenario_run: the ctest driver for scenarios/*.yaml (one file per test): loads and runs each
// file given, prints the timeline and any failure as path:line, exits 1 when one failed and
// 2 when one could not be loaded or set up.
#include <cstdio>

#include "emulator/scenario/runner.h"

int main(int argc, char** argv) {
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    auto sc = pjemu::scenario::LoadScenario(argv[i]);
    if (!sc.ok()) {
      std::fprintf(stderr, "%s\n", sc.status().message().c_str());
      rc = 2;
      continue;
    }
    auto report = pjemu::scenario::RunScenario(*sc);
    if (!report.ok()) {
      std::fprintf(stderr, "%s\n", report.status().ToString().c_str());
      rc = 2;
      continue;
    }
    for (const auto& line : report->timeline) std::printf("  %s\n", line.c_str());
    for (const auto& f : report->failures) std::fprintf(stderr, "%s\n", f.c_str());
    std::printf("%s: %s\n", argv[i], report->passed ? "PASS" : "FAIL");
    if (!report->passed && rc == 0) rc = 1;
  }
  return rc;
}
