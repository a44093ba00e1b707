// The tables of fault actions and expectation kinds: every name the error messages offer parses
// into its kind, every expectation kind has exactly one entry, and the order of the expectation
// table decides between keys an entry has together.
#include <catch2/catch.hpp>
#include <set>

#include "emulator/scenario/expectation_kinds.h"
#include "emulator/scenario/remote.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario {
namespace {

constexpr char kJobs[] = "jobs: [{fixture: fixtures/jobs/mnist-master-1-worker-2.yaml}]\n";

std::string ErrorOf(const std::string& text) {
  auto sc = ParseScenario(text, "s.yaml");
  return sc.ok() ? "" : sc.status().message();
}

// "a, b, c" -> {a, b, c}.
std::vector<std::string> SplitList(std::string text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t comma = text.find(", ", at);
    out.push_back(text.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return out;
}

TEST_CASE("every fault action the error message offers parses into its kind", "[scenario]") {
  const std::string error =
      ErrorOf(std::string(kJobs) + "faults: [{id: f, at: 1s, action: nope}]\n" +
              "expect: [{condition: Succeeded}]\n");
  const std::string supported = "supported values: ";
  REQUIRE(error.find(supported) != std::string::npos);
  const std::vector<std::string> names =
      SplitList(error.substr(error.find(supported) + supported.size()));
  CHECK(names == std::vector<std::string>{"kill", "exit", "hang", "delete-pod", "evict", "oom",
                                          "api-errors", "restart-controller", "patch-job",
                                          "node-down", "node-up", "pull-delay", "cordon",
                                          "uncordon", "evict-pod", "drain"});
  std::set<faults::ActionKind> kinds;
  for (const std::string& name : names) {
    INFO(name);
    auto sc = ParseScenario(std::string(kJobs) + "faults: [{id: f, at: 1s, action: " + name +
                                ", image: x, duration: 1s, rate: 0.5}]\n" +
                                "expect: [{condition: Succeeded}]\n",
                            "s.yaml");
    REQUIRE(sc.ok());
    kinds.insert(sc->faults[0].action.kind);
    if (name == "restart-controller") CHECK(sc->faults[0].action.hook == name);
  }
  CHECK(kinds.size() == names.size());
}

TEST_CASE("every expectation kind has one table entry", "[scenario]") {
  using K = Expectation::Kind;
  std::set<K> seen;
  std::set<int> shown_at;
  for (const internal::ExpectKind& k : internal::ExpectKinds()) {
    CHECK(seen.insert(k.kind).second);
    CHECK(shown_at.insert(k.shown_at).second);
    CHECK(&internal::ExpectKindOf(k.kind) == &k);
    CHECK(k.read != nullptr);
    CHECK(k.check != nullptr);
  }
  CHECK(seen.size() == static_cast<std::size_t>(K::kWorkloadCondition) + 1);
}

TEST_CASE("an expect: entry takes the first kind whose key it has", "[scenario]") {
  auto kind_of = [](const std::string& entry) {
    auto sc = ParseScenario(std::string(kJobs) + "expect: [" + entry + "]\n", "s.yaml");
    INFO(entry << ": " << sc.status().ToString());
    REQUIRE(sc.ok());
    return sc->expect[0].kind;
  };
  using K = Expectation::Kind;
  CHECK(kind_of("{env: X, pod: p, value: v}") == K::kEnv);
  CHECK(kind_of("{metrics: {accuracy: \">= 0.5\"}, pod: p}") == K::kMetrics);
  CHECK(kind_of("{no_process_left: true, pod: p}") == K::kNoProcessLeft);
  CHECK(kind_of("{pod: p, event: X}") == K::kPod);
  CHECK(kind_of("{duration_at_least: 1s}") == K::kDuration);
  CHECK(kind_of("{pods: 2, selector: a=b}") == K::kPodCount);
  CHECK(kind_of("{workload_condition: Admitted, job: x}") == K::kWorkloadCondition);
  CHECK(ErrorOf(std::string(kJobs) + "expect: [{job: x}]\n") ==
        "s.yaml:2: expect[]: say what to expect: condition, conditions_seen, pod, event, env, "
        "duration_at_most/_at_least, rejected, job_gone, pods, metrics, no_process_left or "
        "workload_condition");
}

TEST_CASE("evict-pod and drain read their targets, drain's node and timeout default",
          "[scenario][eviction]") {
  auto parse = [](const std::string& fault) {
    return ParseScenario(
        std::string(kJobs) + "faults: [" + fault + "]\n" + "expect: [{condition: Succeeded}]\n",
        "s.yaml");
  };
  auto evict = parse("{id: e, at: 1s, action: evict-pod, pod: w-0, namespace: ns}");
  REQUIRE(evict.ok());
  CHECK(evict->faults[0].action.kind == faults::ActionKind::kEvictPod);
  CHECK(evict->faults[0].action.target.name == "w-0");
  CHECK(evict->faults[0].action.target.ns == "ns");

  auto drain = parse("{id: d, at: 1s, action: drain}");
  REQUIRE(drain.ok());
  CHECK(drain->faults[0].action.kind == faults::ActionKind::kDrain);
  CHECK(drain->faults[0].action.node.empty());  // the cluster's only node
  CHECK(drain->faults[0].action.timeout == 60s);

  auto named = parse("{id: d, at: 1s, action: drain, node: n1, timeout: 5s}");
  REQUIRE(named.ok());
  CHECK(named->faults[0].action.node == "n1");
  CHECK(named->faults[0].action.timeout == 5s);

  CHECK_THAT(
      ErrorOf(std::string(kJobs) + "faults: [{id: d, at: 1s, action: cordon, timeout: 5s}]\n" +
              "expect: [{condition: Succeeded}]\n"),
      Catch::Contains("only a drain has a timeout"));
}

TEST_CASE("objects: are read as manifests of known kinds and moved into a remote namespace",
          "[scenario][eviction]") {
  const std::string pdb =
      "objects: [{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: keep},"
      " spec: {minAvailable: 1}}]\n";
  auto sc = ParseScenario(pdb + kJobs + "expect: [{condition: Succeeded}]\n", "s.yaml");
  REQUIRE(sc.ok());
  REQUIRE(sc->objects.size() == 1);
  CHECK(sc->objects[0]["spec"]["minAvailable"] == 1);
  auto moved = InNamespace(*sc, "run-ns");
  REQUIRE(moved.ok());
  CHECK(moved->objects[0]["metadata"]["namespace"] == "run-ns");

  CHECK_THAT(ErrorOf("objects: [{apiVersion: v9, kind: Nope, metadata: {name: x}}]\n" +
                     std::string(kJobs) + "expect: [{condition: Succeeded}]\n"),
             Catch::Contains("objects[]: needs apiVersion, kind (of a known resource)"));
}

}  // namespace
}  // namespace pjemu::scenario
