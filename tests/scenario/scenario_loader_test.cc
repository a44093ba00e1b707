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
      {"jobs: [{fixture: a}]\nexpect:\n  - metrics: {accuracy: \"about 0.7\"}\n",
       "s.yaml:3: expect[].metrics.accuracy: bound \"about 0.7\""},
      {"jobs: [{fixture: a}]\nexpect:\n  - metrics: {speed: \">= 1\"}\n",
       "s.yaml:3: expect[].metrics.speed: unknown metric"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n"
       "    when: {log: \"(\", pod: p}\n    action: kill\n    pod: p\n",
       "s.yaml:5: faults[].when.log: invalid regex"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n"
       "    when: {metrics: {step: 0}, pod: p}\n    action: kill\n    pod: p\n",
       "s.yaml:5: faults[].when.metrics: give a step or an epoch"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n    at: 1s\n"
       "    action: pull-delay\n    image: busybox\n",
       "s.yaml:4: faults[]: pull-delay needs image and duration"},
      {"jobs: [{fixture: a}]\nexpect: [{condition: X}]\nfaults:\n  - id: f\n    at: 1s\n"
       "    action: kill\n    pod: p\n    pick: some\n",
       "s.yaml:8: faults[].pick: Unsupported value"},
  };
  for (const Case& c : cases) {
    auto sc = ParseScenario(c.text, "s.yaml");
    INFO(c.text);
    REQUIRE_FALSE(sc.ok());
    CHECK(sc.status().code() == Code::kInvalid);
    CHECK_THAT(sc.status().message(), Catch::StartsWith(c.want));
  }
}

TEST_CASE("LoadScenario reads real time, node faults, new triggers and expectations",
          "[scenario]") {
  auto sc = ParseScenario(R"(options: {time: real, timeout: 2m}
jobs: [{fixture: a}]
processes:
  - {pod: "w-*", peak_memory: 3Gi}
faults:
  - {id: a, at: 10s, jitter: 5s, action: evict, selector: "x=y", pick: random, message: low}
  - {id: b, after: a, action: node-down, node: n1, grace: 20s, eviction: 1m}
  - {id: c, when: {log: "^epoch 1", pod: p, container: c}, action: oom, pod: p}
  - {id: d, when: {metrics: {epoch: 2}, pod: p}, action: pull-delay, image: "busybox*", duration: 2m}
expect:
  - metrics: {accuracy: ">= 0.68", final_loss: "<= 1.0"}
    pod: p
  - no_process_left: true
  - pod: p
    restarts: ">= 1"
    terminated_reason: OOMKilled
  - duration_at_least: 1m
)",
                          "s.yaml");
  INFO(sc.status().ToString());
  REQUIRE(sc.ok());
  CHECK_FALSE(sc->options.virtual_time);
  CHECK(sc->processes[0].peak_memory_bytes == 3LL << 30);
  const auto& f = sc->faults;
  CHECK(f[0].action.kind == faults::ActionKind::kEvict);
  CHECK(f[0].action.pick_random);
  CHECK(f[0].action.message == "low");
  CHECK(f[0].trigger.jitter == 5s);
  CHECK(f[1].action.node == "n1");
  CHECK(f[1].action.node_timing.grace == 20s);
  CHECK(f[1].action.node_timing.eviction == 1min);
  CHECK(f[2].trigger.kind == faults::Trigger::Kind::kLogMatch);
  CHECK(f[2].trigger.pod.container == "c");
  CHECK(f[3].trigger.kind == faults::Trigger::Kind::kMetrics);
  CHECK(f[3].trigger.epoch == 2);
  CHECK(f[3].action.pull_delay == 2min);
  const auto& e = sc->expect;
  CHECK(e[0].kind == Expectation::Kind::kMetrics);
  CHECK(e[0].metrics.at("final_loss") == "<= 1.0");
  CHECK(e[1].kind == Expectation::Kind::kNoProcessLeft);
  CHECK(e[2].restarts_bound == ">= 1");
  CHECK(e[2].terminated_reason == "OOMKilled");
  CHECK(e[3].min_duration == 1min);
}

TEST_CASE("CompareBound reads an operator and a number", "[scenario]") {
  CHECK(*CompareBound(">= 0.68", 0.7));
  CHECK_FALSE(*CompareBound(">= 0.68", 0.6));
  CHECK(*CompareBound("<=1.0", 1.0));
  CHECK(*CompareBound("< 1e-3", 0.0001));
  CHECK(*CompareBound("== 40", 40));
  CHECK_FALSE(*CompareBound("> 40", 40));
  CHECK_FALSE(CompareBound("0.68", 1).ok());
  CHECK_FALSE(CompareBound(">= x", 1).ok());
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
