// The scenario loader: a full file parses into the model; every malformed input is refused
// with path:line and the field.
#include <catch2/catch.hpp>

#include "emulator/scenario/expectation.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {
namespace {

const char* kGood = R"(name: example
options:
  seed: 9
  timeout: 10m
jobs:
  - fixture: fixtures/jobs/mnist-master-1-worker-2.yaml
processes:
  - pod: "*-worker-*"
    runtime: 2m
    exit_code: 1
faults:
  - id: kill
    when: {job: mnist, condition: Running}
    delay: 30s
    action: kill
    selector: training.kubeflow.org/replica-type=worker
    signal: SIGTERM
  - id: errors
    after: kill
    action: api-errors
    rate: 0.2
    code: Conflict
expect:
  - condition: Succeeded
    job: mnist
    reason: PyTorchJobSucceeded
  - pod: mnist-worker-0
    restarts: 1
)";

TEST_CASE("LoadScenario reads every section into the model", "[scenario]") {
  auto sc = ParseScenario(kGood, "s.yaml");
  INFO(sc.status().ToString());
  REQUIRE(sc.ok());
  CHECK(sc->name == "example");
  CHECK(sc->options.seed == 9);
  CHECK(sc->options.timeout == 10min);
  REQUIRE(sc->processes.size() == 1);
  CHECK(sc->processes[0].runtime == 2min);
  CHECK(sc->processes[0].exit_code == 1);
  REQUIRE(sc->faults.size() == 2);
  CHECK(sc->faults[0].trigger.kind == faults::Trigger::Kind::kJobCondition);
  CHECK(sc->faults[0].trigger.delay == 30s);
  CHECK(sc->faults[0].action.signal == SIGTERM);
  CHECK(sc->faults[1].trigger.fault == "kill");
  CHECK(sc->faults[1].action.api_rule.code == Code::kConflict);
  CHECK(sc->fault_lines == std::vector<int>{12, 18});
  REQUIRE(sc->expect.size() == 2);
  CHECK(sc->expect[0].line == 24);
  CHECK(sc->expect[1].kind == Expectation::Kind::kPod);
  CHECK(sc->expect[1].restarts == 1);
}

TEST_CASE("LoadScenario refuses malformed files with path:line and the field", "[scenario]") {
  struct Case {
    std::string text, want;
  };
  const std::vector<Case> cases = {
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nbogus: 1\n",
       "s.yaml:3: scenario.bogus: unknown field"},
      {"expect: [{condition: X}]\n", "s.yaml:1: jobs: a scenario needs a list of jobs"},
      {"jobs: [{fixture: a}]\n", "s.yaml:1: expect: a scenario needs a list of expectations"},
      {"options:\n  timeout: soon\njobs: [{fixture: a}]\nexpect: [{condition: X}]\n",
       "s.yaml:2: options.timeout: expected a duration"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n    at: 1s\n"
       "    action: explode\n",
       "s.yaml:6: faults[].action: Unsupported value: \"explode\""},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n    action: kill\n",
       "s.yaml:4: faults[]: give exactly one trigger"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n    at: 1s\n"
       "    action: kill\n    pod: p\n    signal: SIGNOPE\n",
       "s.yaml:8: faults[].signal: unknown signal"},
      {"jobs: [{fixture: a}]\nexpect:\n  - frobnicate: 1\n", "s.yaml:3: expect[].frobnicate"},
      {"jobs: [{fixture: a, inline: {}}]\nexpect: [{condition: X}]\n",
       "s.yaml:1: jobs[]: give exactly one of fixture or inline"},
      {"jobs: [{fixture: a}\n", "s.yaml:2:"},
  };
  for (const Case& c : cases) {
    auto sc = ParseScenario(c.text, "s.yaml");
    INFO(c.text);
    REQUIRE_FALSE(sc.ok());
    CHECK(sc.status().code() == Code::kInvalid);
    CHECK_THAT(sc.status().message(), Catch::StartsWith(c.want));
  }
}

TEST_CASE("LoadScenario names a missing file", "[scenario]") {
  auto sc = LoadScenario("scenarios/does-not-exist.yaml");
  REQUIRE_FALSE(sc.ok());
  CHECK(sc.status().code() == Code::kNotFound);
  CHECK_THAT(sc.status().message(),
             Catch::StartsWith("scenarios/does-not-exist.yaml: cannot read"));
}

}  // namespace
}  // namespace pjemu::scenario
