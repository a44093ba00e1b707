// Runner: plays one Scenario on a cluster::Cluster whose loop the run drives, in virtual time
// (options.time: virtual; FakeClock, the scenario's scripted processes) or real time (real
// processes, the real trainer, the wall clock). The actors' Client, the kubelet's ProcessRunner
// and its image pulls are wrapped by the faults decorators, with an Injector holding the
// scenario's faults: submit the jobs, run until every accepted job ended (plus `settle`) or the
// timeout, then judge the expectations. Nothing is left running when it returns; in real time a
// process group that survived the cluster's stop fails the run.
// Thread safety: runs on the caller's thread; independent runs share nothing.
#pragma once

#include <string>
#include <vector>

#include "emulator/scenario/expectation.h"
#include "emulator/scenario/scenario.h"
#include "emulator/scenario/timeline.h"

namespace pjemu::scenario {

struct RunReport {
  bool passed = false;
  std::vector<std::string> failures;  // "path:line: expected ..." (see expectation.h)
  std::vector<std::string> timeline;  // "+12s job default/x Running", "+30s fault ...", ...
  Timeline events;                    // the same as data, with pod phases (for reports)
  Observed observed;
};

// Where a real-time run finds the trainer and the data, and where it leaves its files.
struct RunSettings {
  std::string trainer_path;  // "" = pjemu-trainer next to this program, else on PATH
  std::string dataset_dir;   // the trainer's --data-dir; "" = its default
  std::string output_dir;    // pod logs and trainer metrics are kept here; "" = a temp dir
  // The built-in image map under the scenario's options.image_map ("" = fixtures/images.yaml).
  std::string builtin_image_map;
  // The node's image store for real-time scenarios ("" = image maps only;
  // cluster::ClusterOptions::image_store).
  std::string image_store;
};

// kInvalid/kNotFound when the run cannot be set up (a fixture that does not load, a fault the
// injector refuses), each naming path:line; otherwise the report, passed or not.
Result<RunReport> RunScenario(const Scenario& scenario);
Result<RunReport> RunScenario(const Scenario& scenario, const RunSettings& settings);

}  // namespace pjemu::scenario
