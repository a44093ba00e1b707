// The runner end to end in virtual time: a passing scenario, a failing one whose message names
// file:line with the condition history, and the same seed replaying the same run.
#include "emulator/scenario/runner.h"

#include <catch2/catch.hpp>
#include <set>

namespace pjemu::scenario {
namespace {

std::string Job(const std::string& policy) {
  return R"(jobs:
  - inline:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: t}
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            restartPolicy: )" +
         policy + R"(
            template:
              spec:
                containers:
                  - {name: pytorch, image: busybox, command: [sh, -c, train]}
)";
}

TEST_CASE("RunScenario passes a job that succeeds in virtual time", "[scenario]") {
  auto sc = ParseScenario(Job("Never") +
                              "processes:\n  - runtime: 10m\nexpect:\n"
                              "  - condition: Succeeded\n    job: t\n"
                              "  - duration_at_most: 15m\n",
                          "ok.yaml");
  REQUIRE(sc.ok());
  auto report = RunScenario(*sc);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  for (const auto& f : report->failures) UNSCOPED_INFO(f);
  CHECK(report->passed);
  CHECK(report->observed.finished);
  CHECK(report->observed.duration >= 10min);
  CHECK(report->observed.duration < 12min);
}

TEST_CASE("RunScenario reports a failed expectation as file:line with the history", "[scenario]") {
  auto sc = ParseScenario(Job("Never") +
                              "processes:\n  - exit_code: 1\n    runtime: 1m\n"
                              "expect:\n  - condition: Succeeded\n    job: t\n",
                          "scenarios/x.yaml");
  REQUIRE(sc.ok());
  auto report = RunScenario(*sc);
  REQUIRE(report.ok());
  CHECK_FALSE(report->passed);
  REQUIRE(report->failures.size() == 1);
  CHECK_THAT(report->failures[0],
             Catch::StartsWith("scenarios/x.yaml:19: expected condition Succeeded, got Failed ("));
  CHECK_THAT(report->failures[0], Catch::Contains("conditions seen: Created, Running, Failed"));
}

TEST_CASE("RunScenario refuses a fixture that does not load, naming the line", "[scenario]") {
  auto sc = ParseScenario("jobs:\n  - fixture: nowhere.yaml\nexpect: [{condition: X}]\n", "f.yaml");
  REQUIRE(sc.ok());
  auto report = RunScenario(*sc);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::StartsWith("f.yaml:2: fixture"));
}

std::string RandomFaults(int seed) {
  return R"(name: random
options: {seed: )" +
         std::to_string(seed) + R"(}
jobs:
  - inline:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: r}
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                  - {name: pytorch, image: busybox, command: [sh, -c, train]}
          Worker:
            replicas: 4
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                  - {name: pytorch, image: busybox, command: [sh, -c, train]}
processes:
  - runtime: 10m
faults:
  - id: chaos
    when: {job: r, condition: Running}
    delay: 1m
    jitter: 5m
    action: kill
    selector: training.kubeflow.org/replica-type=worker
    pick: random
expect:
  - condition: Succeeded
)";
}

TEST_CASE("a seeded random fault replays exactly and stays in its window", "[scenario]") {
  auto run = [](int seed) {
    auto sc = ParseScenario(RandomFaults(seed), "random.yaml");
    REQUIRE(sc.ok());
    auto report = RunScenario(*sc);
    REQUIRE(report.ok());
    for (const auto& f : report->failures) UNSCOPED_INFO(f);
    CHECK(report->passed);
    REQUIRE(report->observed.fault_log.size() == 1);
    return report->timeline;
  };
  const auto first = run(5);
  CHECK(run(5) == first);  // the same seed: the same pod at the same moment, the same run
  std::set<std::string> kills;
  for (int seed = 1; seed <= 6; ++seed) {
    auto timeline = run(seed);
    for (const auto& line : timeline) {
      if (line.find("chaos kill") == std::string::npos) continue;
      kills.insert(line.substr(line.find("kill")));
    }
  }
  CHECK(kills.size() > 1);  // the seed does pick: different seeds, different victims or times
}

TEST_CASE("a failed expectation shows the tail of the job's pod logs", "[scenario]") {
  auto sc = ParseScenario(Job("Never") +
                              "processes:\n  - exit_code: 3\n    runtime: 1m\n"
                              "    output: [\"loading\", \"boom: out of disk\"]\n"
                              "expect:\n  - pod: t-master-0\n    phase: Succeeded\n",
                          "scenarios/y.yaml");
  REQUIRE(sc.ok());
  auto report = RunScenario(*sc);
  REQUIRE(report.ok());
  REQUIRE(report->failures.size() == 1);
  CHECK_THAT(report->failures[0],
             Catch::StartsWith("scenarios/y.yaml:20: expected pod t-master-0 phase Succeeded, "
                               "got Failed"));
  CHECK_THAT(report->failures[0], Catch::Contains("log t-master-0:"));
  CHECK_THAT(report->failures[0], Catch::Contains("boom: out of disk"));
}

}  // namespace
}  // namespace pjemu::scenario
