// Remote runs' pure parts: which scenarios can run on a real cluster (and the reason when not),
// the namespace each gets, moving a scenario into it, metrics from the trainer's log, and the
// JUnit <skipped> of a scenario that was not run.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "emulator/scenario/compare.h"
#include "emulator/scenario/remote.h"
#include "emulator/scenario/report.h"

namespace pjemu::scenario {
namespace {

// The text with an expectation when it has none (a scenario needs one).
Scenario Parse(std::string text) {
  if (text.find("expect:") == std::string::npos) text += "expect: [{condition: Succeeded}]\n";
  auto sc = ParseScenario(text, "s.yaml");
  INFO((sc.ok() ? std::string() : sc.status().message()));
  REQUIRE(sc.ok());
  return *sc;
}

const char* kJob = R"(jobs:
  - inline:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: j}
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            template:
              spec:
                containers: [{name: pytorch, image: busybox, command: [true]}]
)";

TEST_CASE("a real-time scenario whose faults go through the API can run remotely", "[remote]") {
  // Given a real-time scenario that deletes a pod and patches the job, it should be capable.
  Scenario sc = Parse(std::string("options: {time: real}\n") + kJob + R"(faults:
  - {id: del, at: 5s, action: delete-pod, pod: j-master-0}
  - {id: sus, after: del, action: patch-job, job: j, patch: {spec: {runPolicy: {suspend: true}}}}
  - {id: log, when: {log: "x", pod: j-master-0}, action: delete-pod, pod: j-master-0}
expect:
  - condition: Succeeded
  - metrics: {accuracy: ">= 0.5"}
  - no_process_left: true
)");
  RemoteSupport s = ClassifyRemote(sc);
  CHECK(s.capable);
  CHECK(s.reason.empty());
}

TEST_CASE("what only the emulator can do makes a scenario emulator-only, with the reason",
          "[remote]") {
  const std::string real = "options: {time: real}\n";
  auto [text, reason] = GENERATE_COPY(table<std::string, std::string>({
      {std::string(kJob), "emulator only: virtual time (options.time: virtual)"},
      {real + kJob + "processes: [{pod: '*', runtime: 1m}]\n",
       "emulator only: scripted processes (processes:)"},
      {real + kJob + "faults: [{id: k, at: 1s, action: kill, pod: j-master-0}]\n",
       "emulator only: a signal from the node (through pods/exec the main process is PID 1, which ignores SIGKILL): kill (fault k)"},
      {real + kJob + "faults: [{id: h, at: 1s, action: hang, pod: j-master-0}]\n",
       "emulator only: SIGSTOP from the node (through pods/exec the main process is PID 1, which ignores SIGSTOP): hang (fault h)"},
      {real + kJob + "faults: [{id: n, at: 1s, action: node-down}]\n",
       "emulator only: node power: node-down (fault n)"},
      {real + kJob + "faults: [{id: p, at: 1s, action: pull-delay, image: '*', duration: 1m}]\n",
       "emulator only: image pull delay: pull-delay (fault p)"},
      {real + kJob + "faults: [{id: a, at: 1s, action: api-errors, rate: 0.5}]\n",
       "emulator only: API error rates: api-errors (fault a)"},
      {real + kJob + "faults: [{id: r, at: 1s, action: restart-controller}]\n",
       "emulator only: restarting the emulator's controller: hook (fault r)"},
      {real + kJob + "faults: [{id: e, at: 1s, action: evict, pod: j-master-0}]\n",
       "emulator only: the kubelet's node-pressure eviction: evict (fault e)"},
      {real + kJob +
           "faults: [{id: m, when: {metrics: {step: 10}, pod: j-master-0}, action: delete-pod, "
           "pod: j-master-0}]\n",
       "emulator only: when.metrics.step, the trainer's metrics file (fault m)"},
  }));
  CAPTURE(text);
  RemoteSupport s = ClassifyRemote(Parse(text));
  CHECK_FALSE(s.capable);
  CHECK(s.reason == reason);
}

TEST_CASE("the scenarios in scenarios/ that can run remotely", "[remote]") {
  // Given every file in scenarios/, only the real-time ones without emulator-only faults run
  // remotely; every other one has a reason.
  std::set<std::string> capable;
  for (const auto& entry : std::filesystem::directory_iterator("scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    auto sc = LoadScenario(entry.path().string());
    REQUIRE(sc.ok());
    RemoteSupport s = ClassifyRemote(*sc);
    CAPTURE(entry.path().string());
    CHECK(s.capable == s.reason.empty());
    if (s.capable) capable.insert(entry.path().stem().string());
  }
  CHECK(capable ==
        std::set<std::string>{"drain-real", "oom-real", "pod-deleted-real", "seed-job-real"});
}

TEST_CASE("each remote run's namespace is a DNS label named after the file", "[remote]") {
  CHECK(RemoteNamespace("pjemu", "scenarios/seed-job-real.yaml", 0) ==
        "pjemu-seed-job-real-00000");
  CHECK(RemoteNamespace("pjemu", "scenarios/seed-job-real.yaml", 36 * 36 + 35) ==
        "pjemu-seed-job-real-0010z");
  CHECK(RemoteNamespace("team-a", "My_Scenario.v2.yaml", 1) == "team-a-my-scenario-00001");
  CHECK(RemoteNamespace("pjemu", "___.yaml", 1) == "pjemu-00001");
  std::string long_name = RemoteNamespace("pjemu", std::string(100, 'x') + "-.yaml", 7);
  CHECK(long_name.size() <= 63);
  CHECK(long_name.back() == '7');
  CHECK(long_name.find("--") == std::string::npos);
}

TEST_CASE("a scenario moved into its namespace names only that one", "[remote]") {
  Scenario sc = Parse(std::string("options: {time: real}\n") + kJob + R"(faults:
  - {id: del, when: {job: j, condition: Running}, action: delete-pod, pod: j-master-0}
  - {id: sus, after: del, action: patch-job, job: default/j, patch: {spec: {}}}
expect:
  - condition: Succeeded
    job: j
)");
  auto moved = InNamespace(sc, "pjemu-x-00001");
  REQUIRE(moved.ok());
  CHECK(moved->jobs[0].inline_object["metadata"]["namespace"] == "pjemu-x-00001");
  CHECK(moved->faults[0].trigger.job == "pjemu-x-00001/j");
  CHECK(moved->faults[0].action.target.ns == "pjemu-x-00001");
  CHECK(moved->faults[1].action.job == "pjemu-x-00001/j");
  CHECK(moved->expect[0].job == "pjemu-x-00001/j");

  SECTION("two namespaces cannot share one") {
    sc.expect[0].job = "kubeflow/j";
    auto refused = InNamespace(sc, "pjemu-x-00001");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("more than one namespace"));
  }
}

TEST_CASE("the trainer's metrics are rebuilt from its log", "[remote]") {
  std::string log =
      "Train Epoch: 1 [0/60000 (0%)]\tloss=2.3010\n"
      "Train Epoch: 1 [640/60000 (1%)]\tloss=2.2500\n"
      "\naccuracy=0.3090\n"
      "{metricName: accuracy, metricValue: 0.3090};{metricName: loss, metricValue: 2.2645}\n";
  std::string m = MetricsFromLog(log);
  CHECK(m ==
        "{\"epoch\":1,\"loss\":2.301,\"type\":\"step\"}\n"
        "{\"epoch\":1,\"loss\":2.25,\"type\":\"step\"}\n"
        "{\"accuracy\":0.309,\"epoch\":1,\"test_loss\":2.2645,\"type\":\"epoch\"}\n");
  CHECK(MetricsFromLog("nothing here\n").empty());
}

TEST_CASE("JUnit reports a skipped scenario with its reason", "[remote][junit]") {
  ScenarioResult ran;
  ran.path = "scenarios/a.yaml";
  ran.name = "a";
  ran.report.passed = true;
  ScenarioResult skipped;
  skipped.path = "scenarios/b.yaml";
  skipped.name = "b";
  skipped.skipped = "emulator only: node power: node-down (fault n)";
  std::string xml = RenderJunit({ran, skipped});
  CHECK_THAT(xml, Catch::Contains("skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains(
                      "<testcase classname=\"scenarios\" name=\"b\" file=\"scenarios/b.yaml\" "
                      "time=\"0.000\">\n      <skipped message=\"emulator only: node power: node-down (fault n)\"/>\n"
                      "    </testcase>"));
  CHECK_THAT(xml, !Catch::Contains("<failure"));
  CHECK_THAT(RenderHtmlReport(skipped), Catch::Contains("SKIPPED"));
}

TEST_CASE("two outcomes are compared without times, uids or namespaces", "[remote][compare]") {
  // Given the same scenario seen in two namespaces with different uids and times, the summaries
  // should agree; a different final condition and a failed expectation should show as a diff.
  Scenario sc = Parse(std::string("options: {time: real}\n") + kJob);
  auto outcome = [](const std::string& ns, const std::string& uid, Duration at) {
    RunReport r;
    r.observed.job_keys = {ns + "/j"};
    r.observed.submitted = {Status::Ok()};
    r.observed.history[ns + "/j"] = {"Created", "Running", "Succeeded"};
    r.observed.pod_uids["j-master-0"] = {uid};
    r.observed.events[ns + "/j-master-0.1"] = {"Started", 1};
    r.events.events.push_back({at, TimelineEvent::Kind::kPodPhase, ns + "/j-master-0", "Succeeded"});
    return r;
  };
  RunReport emulator = outcome("default", "uid-1", 3s);
  RunReport cluster = outcome("pjemu-s-00001", "0f3c-...", 17s);
  std::vector<std::string> a = SummarizeOutcome(sc, emulator);
  CHECK(a == std::vector<std::string>{"event reason Started", "expect line " +
                                          std::to_string(sc.expect[0].line) + ": held",
                                      "job j: Succeeded", "pod j-master-0: Succeeded, 1 uid(s)"});
  CHECK(DiffSummaries(a, SummarizeOutcome(sc, cluster), "emulator", "cluster").empty());

  cluster.observed.history["pjemu-s-00001/j"].back() = "Failed";
  cluster.failures = {"s.yaml:" + std::to_string(sc.expect[0].line) + ": expected condition ..."};
  CHECK(DiffSummaries(a, SummarizeOutcome(sc, cluster), "emulator", "cluster") ==
        std::vector<std::string>{
            "- emulator: expect line " + std::to_string(sc.expect[0].line) + ": held",
            "- emulator: job j: Succeeded",
            "+ cluster: expect line " + std::to_string(sc.expect[0].line) + ": failed",
            "+ cluster: job j: Failed"});
}

TEST_CASE("compare reads conditions, labels, env and restarts with the namespace left out",
          "[remote][compare]") {
  // Given the last job and pod objects seen in two namespaces, the condition messages naming the
  // namespace, the labels, env and restart counts should agree; another RANK or restart count
  // should show as a diff.
  Scenario sc = Parse(std::string("options: {time: real}\n") + kJob);
  auto outcome = [](const std::string& ns, int restarts, const std::string& rank) {
    RunReport r;
    r.observed.job_keys = {ns + "/j"};
    r.observed.submitted = {Status::Ok()};
    r.observed.last_jobs[ns + "/j"] = Json::parse(R"({"metadata": {"namespace": ")" + ns +
                                                  R"("}, "status": {"conditions": [
        {"type": "Created", "status": "True", "reason": "PyTorchJobCreated",
         "message": "PyTorchJob )" + ns + R"(/j is created."}],
        "replicaStatuses": {"Master": {"succeeded": 1}}}})");
    r.observed.last_pods["j-master-0"] = Json::parse(
        R"({"metadata": {"namespace": ")" + ns + R"(", "labels": {"training.kubeflow.org/job-name": "j"}},
            "spec": {"containers": [{"name": "pytorch", "env": [{"name": "RANK", "value": ")" +
        rank + R"("}]}]},
            "status": {"containerStatuses": [{"name": "pytorch", "restartCount": )" +
        std::to_string(restarts) + "}]}}");
    return r;
  };
  std::vector<std::string> a = SummarizeOutcome(sc, outcome("default", 0, "0"));
  CHECK(std::count(a.begin(), a.end(),
                   "job j condition 1: Created True PyTorchJobCreated \"PyTorchJob <ns>/j is "
                   "created.\"") == 1);
  CHECK(std::count(a.begin(), a.end(), "job j replica Master: active 0, succeeded 1, failed 0"));
  CHECK(std::count(a.begin(), a.end(), "pod j-master-0 label training.kubeflow.org/job-name=j"));
  CHECK(std::count(a.begin(), a.end(), "pod j-master-0 container pytorch env RANK=0"));
  CHECK(std::count(a.begin(), a.end(), "pod j-master-0 container pytorch restarts 0"));
  CHECK(DiffSummaries(a, SummarizeOutcome(sc, outcome("pjemu-s-00001", 0, "0")), "emulator",
                      "cluster")
            .empty());
  CHECK(DiffSummaries(a, SummarizeOutcome(sc, outcome("pjemu-s-00001", 2, "1")), "emulator",
                      "cluster") ==
        std::vector<std::string>{"- emulator: pod j-master-0 container pytorch env RANK=0",
                                 "- emulator: pod j-master-0 container pytorch restarts 0",
                                 "+ cluster: pod j-master-0 container pytorch env RANK=1",
                                 "+ cluster: pod j-master-0 container pytorch restarts 2"});
}

}  // namespace
}  // namespace pjemu::scenario
