// Runner: plays one Scenario in virtual time on a cluster::VirtualCluster whose actors' Client
// and kubelet ProcessRunner are wrapped by the faults decorators, with an Injector holding the
// scenario's faults: submit the jobs, run until every accepted job ended (plus `settle`) or
// the timeout, then judge the expectations. Nothing is left running when it returns.
// Thread safety: runs on the caller's thread; independent runs share nothing.
#pragma once

#include <string>
#include <vector>

#include "emulator/scenario/expectation.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {

struct RunReport {
  bool passed = false;
  std::vector<std::string> failures;  // "path:line: expected ..." (see expectation.h)
  std::vector<std::string> timeline;  // "+12s job default/x Running", "+30s fault ...", ...
  Observed observed;
};

// kInvalid/kNotFound when the run cannot be set up (a fixture that does not load, a fault the
// injector refuses), each naming path:line; otherwise the report, passed or not.
Result<RunReport> RunScenario(const Scenario& scenario);

}  // namespace pjemu::scenario
