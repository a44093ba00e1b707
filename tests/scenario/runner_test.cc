// The runner end to end in virtual time: a passing scenario, a failing one whose message names
// file:line with the condition history, and the same seed replaying the same run.
#include "emulator/scenario/runner.h"

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace pjemu::scenario
