// Reports of scenario runs (`pjemu scenario run --junit F --output-dir D`): JUnit XML with one
// testcase per scenario file, and one self-contained HTML page per run with SVG charts (the
// pods' phases and the jobs' conditions over time, faults marked, the trainer's loss curve when
// the run had one). Both are pure renderings of what the runner returned.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/scenario/runner.h"

namespace pjemu::scenario {

struct ScenarioResult {
  std::string path;     // the file as given
  std::string name;     // the scenario's name: (the path when it has none)
  Status setup;         // not ok: the file did not load or the run could not be set up
  std::string skipped;  // not "": not run, and why ("emulator only: node power: node-down"); setup is ok
  RunReport report;     // meaningful when setup is ok
  double seconds = 0;   // wall time of the run
};

// <testsuites><testsuite name="pjemu scenarios"> with one <testcase> per result: <failure> with
// the failure messages, <error> when it could not run, <skipped message="REASON"/> when it was
// skipped (counted in the suite's skipped=), <system-out> with the text timeline.
std::string RenderJunit(const std::vector<ScenarioResult>& results);

// One HTML document, no external resources (inline CSS and SVG).
std::string RenderHtmlReport(const ScenarioResult& result);

// `scenario compare`'s page: AGREE or DIFFER, the lines only one side has (DiffSummaries), and
// the two runs' timelines side by side.
std::string RenderCompareReport(const ScenarioResult& emulator, const ScenarioResult& cluster,
                                const std::vector<std::string>& diff);

// "&<>\"'" as XML/HTML entities; control characters other than tab/newline dropped (XML 1.0
// cannot carry them).
std::string XmlEscape(std::string_view text);

}  // namespace pjemu::scenario
