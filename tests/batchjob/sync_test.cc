// Given a defaulted Job, its pods and a fake `now`, the pass should decide as the Job controller
// does (BEHAVIOUR.md cites each TEST_CASE by its J number).
#include <catch2/catch.hpp>

#include "emulator/api/batchjob.h"
#include "emulator/api/workload.h"
#include "emulator/batchjob/sync.h"

namespace pjemu::batchjob {
namespace {

namespace bj = api::batchjob;
using Kind = Action::Kind;

const Time kT0 = FakeClock().Now();

// `kubectl create job pi --image=busybox -- sh -c 'echo hi'`, as admission stores it.
Json PiJob() {
  Json job = Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "uid": "uid-1"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "pi", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}}})");
  bj::SetDefaults(job);
  return job;
}

Json Indexed(std::int64_t completions, std::int64_t parallelism) {
  Json job = PiJob();
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["completions"] = completions;
  job["spec"]["parallelism"] = parallelism;
  return job;
}

Json Pod(const std::string& name, const std::string& phase, std::optional<std::int64_t> index = {},
         std::optional<int> exit = {}) {
  Json pod = {{"metadata", {{"name", name}, {"namespace", "default"}, {"labels", Json::object()}}},
              {"status", {{"phase", phase}}}};
  if (index) pod["metadata"]["labels"][bj::kCompletionIndex] = std::to_string(*index);
  if (exit) {
    pod["status"]["containerStatuses"] = Json::array(
        {{{"name", "pi"},
          {"restartCount", 0},
          {"state", {{"terminated", {{"exitCode", *exit}, {"finishedAt", FormatTime(kT0)}}}}}}});
  }
  return pod;
}

std::vector<std::string> Creates(const Sync& s) {
  std::vector<std::string> out;
  for (const Action& a : s.actions) {
    if (a.Is(Kind::kCreate, api::Pods())) out.push_back(a.object["metadata"]["generateName"]);
  }
  return out;
}

std::vector<std::string> Deletes(const Sync& s) {
  std::vector<std::string> out;
  for (const Action& a : s.actions) {
    if (a.Is(Kind::kDelete, api::Pods())) out.push_back(a.name);
  }
  return out;
}

std::string CondOf(const Json& status, const std::string& type) {
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c["type"] == type) return c["status"].get<std::string>() + "/" + c["reason"].get<std::string>();
  }
  return "";
}

Json With(Json job, const Sync& s) {
  job["status"] = s.status;
  return job;
}

TEST_CASE("J1: admission defaults a Job as the API server does") {
  Json job = PiJob();
  const Json& spec = job["spec"];
  CHECK(spec["parallelism"] == 1);
  CHECK(spec["completions"] == 1);
  CHECK(spec["backoffLimit"] == 6);
  CHECK(spec["completionMode"] == "NonIndexed");
  CHECK(spec["suspend"] == false);
  CHECK(spec["podReplacementPolicy"] == "TerminatingOrFailed");
  CHECK(spec["selector"] == Json{{"matchLabels", {{"batch.kubernetes.io/controller-uid", "uid-1"}}}});
  const Json& labels = spec["template"]["metadata"]["labels"];
  CHECK(labels["batch.kubernetes.io/job-name"] == "pi");
  CHECK(labels["job-name"] == "pi");
  CHECK(labels["controller-uid"] == "uid-1");
  // Parallelism alone leaves completions unset (a work queue).
  Json queue = Json::parse(R"({"metadata": {"name": "q", "uid": "u"}, "spec": {"parallelism": 3}})");
  bj::SetDefaults(queue);
  CHECK(!queue["spec"].contains("completions"));
  Json per_index = Json::parse(R"({"metadata": {"name": "q", "uid": "u"}, "spec": {"backoffLimitPerIndex": 1}})");
  bj::SetDefaults(per_index);
  CHECK(per_index["spec"]["backoffLimit"] == 2147483647);
}

TEST_CASE("J2: validation names the field") {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"restartPolicy Always", [](Json& j) { j["spec"]["template"]["spec"]["restartPolicy"] = "Always"; },
       "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: "
       "\"OnFailure\", \"Never\""},
      {"negative parallelism", [](Json& j) { j["spec"]["parallelism"] = -1; },
       "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"},
      {"zero deadline", [](Json& j) { j["spec"]["activeDeadlineSeconds"] = 0; },
       "spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0"},
      {"Indexed without completions",
       [](Json& j) { j["spec"]["completionMode"] = "Indexed"; j["spec"].erase("completions"); },
       "spec.completions: Required value: when completion mode is Indexed"},
      {"no image", [](Json& j) { j["spec"]["template"]["spec"]["containers"][0].erase("image"); },
       "spec.template.spec.containers[0].image: Required value"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Json job = PiJob();
    c.edit(job);
    bool found = false;
    for (const auto& e : bj::FieldErrors(job, nullptr)) found |= e.ToString() == c.error;
    CHECK(found);
  }
  CHECK(bj::FieldErrors(PiJob(), nullptr).empty());
  Json changed = PiJob();
  changed["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine";
  const Json old = PiJob();
  const auto errs = bj::FieldErrors(changed, &old);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() == "spec.template: Invalid value: field is immutable");
}

TEST_CASE("J3: a NonIndexed Job makes `<job>-` pods up to parallelism, then completes") {
  Json job = PiJob();
  job["spec"]["completions"] = 3;
  job["spec"]["parallelism"] = 2;
  Sync s = ComputeSync(job, {}, kT0);
  CHECK(Creates(s) == std::vector<std::string>{"pi-", "pi-"});
  CHECK(s.status["active"] == 2);
  CHECK(s.status["startTime"] == FormatTime(kT0));
  job = With(job, s);
  // One succeeded, one running: one more pod for the third completion.
  s = ComputeSync(job, {Pod("pi-a", "Succeeded"), Pod("pi-b", "Running")}, kT0);
  CHECK(Creates(s) == std::vector<std::string>{"pi-"});
  CHECK(s.status["succeeded"] == 1);
  job = With(job, s);
  s = ComputeSync(job, {Pod("pi-a", "Succeeded"), Pod("pi-b", "Succeeded"), Pod("pi-c", "Succeeded")},
                  kT0 + std::chrono::seconds(5));
  CHECK(CondOf(s.status, "SuccessCriteriaMet") == "True/CompletionsReached");
  CHECK(CondOf(s.status, "Complete") == "True/CompletionsReached");
  CHECK(s.status["completionTime"] == FormatTime(kT0 + std::chrono::seconds(5)));
  CHECK(s.status["succeeded"] == 3);
  CHECK(!s.status.contains("active"));
  job = With(job, s);
  const api::WorkloadState state = api::StateOf(job);
  CHECK(state.state == "Complete");
  CHECK(state.succeeded);
  // A finished Job is left alone.
  CHECK(ComputeSync(job, {}, kT0 + std::chrono::hours(1)).actions.empty());
}

TEST_CASE("J4: an Indexed Job gives each pod its index, hostname and env, completedIndexes") {
  Json job = Indexed(4, 2);
  Sync s = ComputeSync(job, {}, kT0);
  CHECK(Creates(s) == std::vector<std::string>{"pi-0-", "pi-1-"});
  const Json& pod = s.actions[0].object;
  CHECK(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0");
  CHECK(pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0");
  CHECK(pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi");
  CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "Job");
  CHECK(pod["spec"]["hostname"] == "pi-0");
  CHECK(pod["spec"]["containers"][0]["env"].back()["name"] == "JOB_COMPLETION_INDEX");
  job = With(job, s);
  // Index 1 done, index 0 running: index 2 is the lowest pending one.
  s = ComputeSync(job, {Pod("pi-0-x", "Running", 0), Pod("pi-1-x", "Succeeded", 1)}, kT0);
  CHECK(Creates(s) == std::vector<std::string>{"pi-2-"});
  CHECK(s.status["completedIndexes"] == "1");
  job = With(job, s);
  s = ComputeSync(job, {Pod("a", "Succeeded", 0), Pod("b", "Succeeded", 1), Pod("c", "Succeeded", 2),
                        Pod("d", "Succeeded", 3)}, kT0);
  CHECK(s.status["completedIndexes"] == "0-3");
  CHECK(CondOf(s.status, "Complete") == "True/CompletionsReached");
  CHECK(bj::FormatIntervals({0, 1, 3, 5, 6, 7}) == "0,1,3,5-7");
}

TEST_CASE("J5: failed pods count against backoffLimit, with the failure backoff between pods") {
  Json job = PiJob();
  job["spec"]["backoffLimit"] = 1;
  job = With(job, ComputeSync(job, {}, kT0));
  // The first failure: a new pod only after 10s.
  Sync s = ComputeSync(job, {Pod("pi-a", "Failed", {}, 1)}, kT0 + std::chrono::seconds(3));
  CHECK(Creates(s).empty());
  CHECK(s.requeue_after == std::chrono::seconds(7));
  CHECK(s.status["failed"] == 1);
  s = ComputeSync(job, {Pod("pi-a", "Failed", {}, 1)}, kT0 + std::chrono::seconds(10));
  CHECK(Creates(s) == std::vector<std::string>{"pi-"});
  job = With(job, s);
  s = ComputeSync(job, {Pod("pi-a", "Failed", {}, 1), Pod("pi-b", "Failed", {}, 1)},
                  kT0 + std::chrono::seconds(20));
  CHECK(CondOf(s.status, "FailureTarget") == "True/BackoffLimitExceeded");
  CHECK(CondOf(s.status, "Failed") == "True/BackoffLimitExceeded");
  CHECK(s.status["failed"] == 2);
  CHECK(!s.status.contains("completionTime"));
  CHECK(api::StateOf(With(job, s)).state == "Failed");
  CHECK(FailureBackoff(1) == std::chrono::seconds(10));
  CHECK(FailureBackoff(3) == std::chrono::seconds(40));
  CHECK(FailureBackoff(20) == std::chrono::minutes(6));
}

TEST_CASE("J6: OnFailure container restarts count against backoffLimit") {
  Json job = PiJob();
  job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure";
  job["spec"]["backoffLimit"] = 2;
  job = With(job, ComputeSync(job, {}, kT0));
  Json pod = Pod("pi-a", "Running");
  pod["status"]["containerStatuses"] = Json::array({{{"name", "pi"}, {"restartCount", 2}}});
  Sync s = ComputeSync(job, {pod}, kT0);
  CHECK(CondOf(s.status, "FailureTarget") == "True/BackoffLimitExceeded");
  CHECK(Deletes(s) == std::vector<std::string>{"pi-a"});
  CHECK(CondOf(s.status, "Failed") == "");  // until the pod is gone
  job = With(job, s);
  s = ComputeSync(job, {}, kT0 + std::chrono::seconds(1));
  CHECK(CondOf(s.status, "Failed") == "True/BackoffLimitExceeded");
}

TEST_CASE("J7: activeDeadlineSeconds fails the Job with DeadlineExceeded") {
  Json job = PiJob();
  job["spec"]["activeDeadlineSeconds"] = 30;
  Sync s = ComputeSync(job, {}, kT0);
  CHECK(s.requeue_after == std::chrono::seconds(30));
  job = With(job, s);
  s = ComputeSync(job, {Pod("pi-a", "Running")}, kT0 + std::chrono::seconds(30));
  CHECK(CondOf(s.status, "FailureTarget") == "True/DeadlineExceeded");
  CHECK(Deletes(s) == std::vector<std::string>{"pi-a"});
  job = With(job, s);
  s = ComputeSync(job, {}, kT0 + std::chrono::seconds(31));
  CHECK(CondOf(s.status, "Failed") == "True/DeadlineExceeded");
  CHECK(api::StateOf(With(job, s)).message == "Job was active longer than specified deadline");
}

TEST_CASE("J8: podFailurePolicy: FailJob fails at once, Ignore does not count") {
  Json job = PiJob();
  job["spec"]["podFailurePolicy"] = Json::parse(R"({"rules": [
    {"action": "FailJob", "onExitCodes": {"containerName": "pi", "operator": "In", "values": [42]}},
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]})");
  job = With(job, ComputeSync(job, {}, kT0));
  Json evicted = Pod("pi-a", "Failed", {}, 137);
  evicted["status"]["conditions"] = Json::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  Sync s = ComputeSync(job, {evicted}, kT0);
  CHECK(!s.status.contains("failed"));
  CHECK(Creates(s) == std::vector<std::string>{"pi-"});
  s = ComputeSync(job, {Pod("pi-b", "Failed", {}, 42)}, kT0);
  CHECK(CondOf(s.status, "Failed") == "True/PodFailurePolicy");
  CHECK(api::StateOf(With(job, s)).message ==
        "Container pi for pod default/pi-b failed with exit code 42 matching FailJob rule at index 0");
}

TEST_CASE("J9: suspend deletes the pods, resuming starts again") {
  Json job = PiJob();
  job["spec"]["suspend"] = true;
  Sync s = ComputeSync(job, {Pod("pi-a", "Running")}, kT0);
  CHECK(Deletes(s) == std::vector<std::string>{"pi-a"});
  CHECK(CondOf(s.status, "Suspended") == "True/JobSuspended");
  CHECK(!s.status.contains("startTime"));
  CHECK(api::StateOf(With(job, s)).state == "Suspended");
  job = With(job, s);
  job["spec"]["suspend"] = false;
  s = ComputeSync(job, {}, kT0 + std::chrono::seconds(9));
  CHECK(CondOf(s.status, "Suspended") == "False/JobResumed");
  CHECK(Creates(s) == std::vector<std::string>{"pi-"});
  CHECK(s.status["startTime"] == FormatTime(kT0 + std::chrono::seconds(9)));
}

TEST_CASE("J10: ttlSecondsAfterFinished deletes the finished Job") {
  Json job = PiJob();
  job["spec"]["ttlSecondsAfterFinished"] = 60;
  job = With(job, ComputeSync(job, {}, kT0));
  job = With(job, ComputeSync(job, {Pod("pi-a", "Succeeded")}, kT0));
  REQUIRE(bj::IsFinished(job));
  Sync s = ComputeSync(job, {}, kT0 + std::chrono::seconds(20));
  CHECK(s.requeue_after == std::chrono::seconds(40));
  CHECK(s.actions.empty());
  s = ComputeSync(job, {}, kT0 + std::chrono::seconds(60));
  REQUIRE(s.actions.size() == 1);
  CHECK(s.actions[0].Is(Kind::kDelete, api::Jobs()));
}

TEST_CASE("J11: lowering parallelism deletes the surplus pods") {
  Json job = PiJob();
  job["spec"]["completions"] = 5;
  job["spec"]["parallelism"] = 1;
  Sync s = ComputeSync(job, {Pod("pi-a", "Running"), Pod("pi-b", "Running")}, kT0);
  CHECK(Deletes(s) == std::vector<std::string>{"pi-b"});
  CHECK(s.status["active"] == 1);
}

}  // namespace
}  // namespace pjemu::batchjob
