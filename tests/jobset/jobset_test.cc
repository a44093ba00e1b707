// Given a defaulted JobSet, its child Jobs and a fake `now`, the pass should decide as the
// JobSet controller does (BEHAVIOUR.md cites each TEST_CASE by its JS number).
#include <catch2/catch.hpp>

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/jobset/sync.h"

namespace pjemu::jobset {
namespace {

namespace ajs = api::jobset;
using Kind = Action::Kind;

const Time kT0 = FakeClock().Now();

// The JobSet a TrainJob `tj` with numNodes 2 gets, as admission stores it.
Json TwoNodes(const std::string& extra_spec = "{}") {
  Json js = Json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "tj", "namespace": "default", "uid": "js-uid"},
    "spec": {"replicatedJobs": [{"name": "node",
      "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
          "containers": [{"name": "node", "image": "pytorch/pytorch:2"}]}}}}}]}})");
  js["spec"].update(Json::parse(extra_spec));
  ajs::SetDefaults(js);
  return js;
}

// The actions of `kind` (of `type` unless kEvent).
std::vector<const Action*> Of(const Sync& s, Kind kind,
                              const api::ResourceType& type = api::Jobs()) {
  std::vector<const Action*> out;
  for (const Action& a : s.actions) {
    if (a.kind == kind && (kind == Kind::kEvent || *a.type == type)) out.push_back(&a);
  }
  return out;
}

// A stored child Job of attempt `attempt` with a condition ("" = running).
Json ChildJob(const Json& js, std::int64_t index, const std::string& cond, std::int64_t attempt = 0,
              const std::string& reason = "BackoffLimitExceeded") {
  Json with_attempt = js;
  with_attempt["status"]["restarts"] = attempt;
  Json job = DesiredJob(with_attempt, js["spec"]["replicatedJobs"][0], index);
  job["status"] = {{"active", cond.empty() ? 2 : 0}, {"ready", cond.empty() ? 2 : 0}};
  if (!cond.empty()) {
    job["status"]["conditions"] = {{{"type", cond}, {"status", "True"}, {"reason", reason}}};
  }
  return job;
}

// The condition of `type` with status True in the pass's status, or nullptr.
const Json* Cond(const Sync& s, const char* type) {
  for (const Json& c : api::ArrayOr(api::Field(s.status, "conditions"))) {
    if (c["type"] == type && c["status"] == "True") return &c;
  }
  return nullptr;
}

Json After(Json js, const Sync& s) {
  js["status"] = s.status;
  return js;
}

TEST_CASE("JS1 a child Job is named <jobset>-<rjob>-<index> and carries JobSet's labels", "[jobset]") {
  Json job = DesiredJob(TwoNodes(), TwoNodes()["spec"]["replicatedJobs"][0], 0);
  CHECK(job["metadata"]["name"] == "tj-node-0");
  const Json& labels = job["metadata"]["labels"];
  CHECK(labels[ajs::kJobSetNameKey] == "tj");
  CHECK(labels[ajs::kJobSetUidKey] == "js-uid");
  CHECK(labels[ajs::kReplicatedJobNameKey] == "node");
  CHECK(labels[ajs::kReplicatedJobReplicasKey] == "1");
  CHECK(labels[ajs::kJobIndexKey] == "0");
  CHECK(labels[ajs::kJobGlobalIndexKey] == "0");
  CHECK(labels[ajs::kRestartsKey] == "0");
  CHECK(labels[ajs::kGroupNameKey] == "default");
  CHECK(labels[ajs::kJobKey] == ajs::JobKey("default", "tj-node-0"));
  CHECK(labels["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer");
  CHECK(job["metadata"]["annotations"][ajs::kJobIndexKey] == "0");
  const Json& pod = job["spec"]["template"];
  CHECK(pod["metadata"]["labels"][ajs::kJobSetNameKey] == "tj");
  CHECK(pod["spec"]["subdomain"] == "tj");
  CHECK(pod["spec"]["restartPolicy"] == "OnFailure");
  CHECK(job["spec"]["completionMode"] == "Indexed");
  CHECK(job["spec"]["suspend"] == false);
  CHECK(job["metadata"]["ownerReferences"][0]["kind"] == "JobSet");
  CHECK(ajs::JobKey("default", "tj-node-0").size() == 40);
}

TEST_CASE("JS2 the first pass makes the headless Service and every Job", "[jobset]") {
  Sync s = ComputeSync(TwoNodes(R"({"replicatedJobs": [{"name": "node", "replicas": 2,
      "template": {"spec": {"template": {"spec": {"containers": [{"name": "n", "image": "x"}]}}}}}]})"),
                       {}, false, kT0);
  auto svc = Of(s, Kind::kCreate, api::Services());
  REQUIRE(svc.size() == 1);
  CHECK(svc[0]->object["metadata"]["name"] == "tj");
  CHECK(svc[0]->object["spec"]["clusterIP"] == "None");
  CHECK(svc[0]->object["spec"]["selector"][ajs::kJobSetNameKey] == "tj");
  CHECK(svc[0]->object["spec"]["publishNotReadyAddresses"] == true);
  auto jobs = Of(s, Kind::kCreate);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[1]->object["metadata"]["name"] == "tj-node-1");
  CHECK(jobs[1]->object["metadata"]["labels"][ajs::kJobGlobalIndexKey] == "1");
  CHECK(s.status["restarts"] == 0);
  CHECK(s.status["replicatedJobsStatus"][0]["name"] == "node");
  CHECK(s.status_changed);
  // A second pass with the Service and Jobs present creates nothing.
  Json js = After(TwoNodes(), s);
  Sync again = ComputeSync(js, {ChildJob(js, 0, "")}, true, kT0);
  CHECK(Of(again, Kind::kCreate).empty());
  CHECK(Of(again, Kind::kCreate, api::Services()).empty());
  CHECK(again.status["replicatedJobsStatus"][0]["ready"] == 1);
  CHECK(again.status["replicatedJobsStatus"][0]["active"] == 1);
}

TEST_CASE("JS3 every Job Complete: Completed AllJobsCompleted, then running Jobs deleted", "[jobset]") {
  Json js = TwoNodes();
  Sync s = ComputeSync(js, {ChildJob(js, 0, "Complete")}, true, kT0);
  const Json* c = Cond(s, ajs::kCompleted);
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == ajs::kAllJobsCompleted);
  CHECK((*c)["message"] == "jobset completed successfully");
  CHECK(s.status["terminalState"] == "Completed");
  CHECK(s.status["replicatedJobsStatus"][0]["succeeded"] == 1);
  Json done = After(js, s);
  Sync finished = ComputeSync(done, {ChildJob(done, 1, "")}, true, kT0);
  REQUIRE(Of(finished, Kind::kDelete).size() == 1);
  CHECK_FALSE(finished.status_changed);
}

TEST_CASE("JS4 a failed Job without a failure policy fails the JobSet (FailedJobs)", "[jobset]") {
  Json js = TwoNodes();
  Sync s = ComputeSync(js, {ChildJob(js, 0, "Failed")}, true, kT0);
  const Json* c = Cond(s, ajs::kFailed);
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == "FailedJobs");
  CHECK((*c)["message"] == "jobset failed due to one or more job failures");
  CHECK(s.status["terminalState"] == "Failed");
}

TEST_CASE("JS5 maxRestarts: a failed Job recreates every Job under a new attempt", "[jobset]") {
  Json js = TwoNodes(R"({"failurePolicy": {"maxRestarts": 1}})");
  CHECK(js["spec"]["failurePolicy"]["restartStrategy"] == "Recreate");
  Sync s = ComputeSync(js, {ChildJob(js, 0, "Failed")}, true, kT0);
  CHECK(s.status["restarts"] == 1);
  CHECK(s.status["restartsCountTowardsMax"] == 1);
  auto events = Of(s, Kind::kEvent);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->reason == "Restarting");
  CHECK(events[0]->message == "restarting jobset, attempt 1");
  CHECK(Cond(s, ajs::kFailed) == nullptr);
  // Next pass: the attempt-0 Job is deleted and attempt 1's created.
  Json restarted = After(js, s);
  Sync next = ComputeSync(restarted, {ChildJob(js, 0, "Failed")}, true, kT0);
  REQUIRE(Of(next, Kind::kDelete).size() == 1);
  auto created = Of(next, Kind::kCreate);
  REQUIRE(created.size() == 1);
  CHECK(created[0]->object["metadata"]["labels"][ajs::kRestartsKey] == "1");
  // Attempt 1 fails too: no restarts left.
  Sync last = ComputeSync(restarted, {ChildJob(restarted, 0, "Failed", 1)}, true, kT0);
  const Json* c = Cond(last, ajs::kFailed);
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == "ReachedMaxRestarts");
  CHECK(last.status["restarts"] == 1);
}

TEST_CASE("JS6 failure policy rules: the first matching rule's action", "[jobset]") {
  Json js = TwoNodes(R"({"failurePolicy": {"maxRestarts": 3, "rules": [
      {"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
      {"action": "RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs": ["node"]}]}})");
  Sync fail = ComputeSync(js, {ChildJob(js, 0, "Failed", 0, "PodFailurePolicy")}, true, kT0);
  const Json* c = Cond(fail, ajs::kFailed);
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == "FailJobSetFailurePolicyAction");
  Sync restart = ComputeSync(js, {ChildJob(js, 0, "Failed")}, true, kT0);
  CHECK(restart.status["restarts"] == 1);
  CHECK_FALSE(restart.status.contains("restartsCountTowardsMax"));
}

TEST_CASE("JS7 success policy Any over a target replicatedJob", "[jobset]") {
  Json js = TwoNodes(R"({"successPolicy": {"operator": "Any", "targetReplicatedJobs": ["node"]},
      "replicatedJobs": [{"name": "node", "replicas": 3, "template": {"spec": {"template": {"spec":
      {"containers": [{"name": "n", "image": "x"}]}}}}}]})");
  Sync s = ComputeSync(js, {ChildJob(js, 0, ""), ChildJob(js, 1, "Complete")}, true, kT0);
  CHECK(Cond(s, ajs::kCompleted) != nullptr);
  Json all = TwoNodes(R"({"replicatedJobs": [{"name": "node", "replicas": 2, "template": {"spec":
      {"template": {"spec": {"containers": [{"name": "n", "image": "x"}]}}}}}]})");
  Sync one = ComputeSync(all, {ChildJob(all, 0, "Complete"), ChildJob(all, 1, "")}, true, kT0);
  CHECK(Cond(one, ajs::kCompleted) == nullptr);
}

TEST_CASE("JS8 suspend and resume: the Jobs follow, the Suspended condition says so", "[jobset]") {
  Json js = TwoNodes(R"({"suspend": true})");
  Sync created = ComputeSync(js, {}, false, kT0);
  REQUIRE(Of(created, Kind::kCreate).size() == 1);
  CHECK(Of(created, Kind::kCreate)[0]->object["spec"]["suspend"] == true);
  const Json* c = Cond(created, ajs::kSuspended);
  REQUIRE(c != nullptr);
  CHECK((*c)["reason"] == "SuspendedJobs");
  Json resumed = After(js, created);
  resumed["spec"]["suspend"] = false;
  Json job = ChildJob(js, 0, "");
  job["spec"]["suspend"] = true;
  Sync s = ComputeSync(resumed, {job}, true, kT0);
  auto updates = Of(s, Kind::kUpdate);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0]->object["spec"]["suspend"] == false);
  CHECK(s.status["conditions"][0]["status"] == "False");
  CHECK(s.status["conditions"][0]["reason"] == "ResumeJobs");
}

TEST_CASE("JS9 the webhook defaults and refuses what JobSet's does (403)", "[jobset]") {
  Json js = TwoNodes();
  CHECK(js["spec"]["network"]["enableDNSHostnames"] == true);
  CHECK(js["spec"]["successPolicy"]["operator"] == "All");
  CHECK(js["spec"]["replicatedJobs"][0]["replicas"] == 1);
  CHECK(ajs::Validate(js, nullptr, nullptr).ok());
  Json bad = js;
  bad["spec"]["successPolicy"]["operator"] = "Most";
  bad["spec"]["replicatedJobs"].push_back(bad["spec"]["replicatedJobs"][0]);
  Status s = ajs::Validate(bad, nullptr, nullptr);
  CHECK(s.code() == Code::kForbidden);
  CHECK_THAT(s.message(), Catch::Contains("admission webhook \"vjobset.kb.io\" denied the request"));
  CHECK_THAT(s.message(), Catch::Contains("spec.successPolicy.operator: Unsupported value: \"Most\""));
  CHECK_THAT(s.message(), Catch::Contains("spec.replicatedJobs[1].name: Duplicate value"));
  Json changed = js;
  changed["spec"]["replicatedJobs"][0]["replicas"] = 2;
  CHECK_THAT(ajs::Validate(changed, &js, nullptr).message(),
             Catch::Contains("spec.replicatedJobs: Invalid value"));
  changed["spec"]["suspend"] = true;  // suspended, replicas stay fixed...
  CHECK_THAT(ajs::Validate(changed, &js, nullptr).message(),
             Catch::Contains("spec.replicatedJobs: Invalid value"));
  changed = js;  // ...but the scheduling of its pods may change (what Kueue writes)
  changed["spec"]["suspend"] = true;
  Json& pod = changed["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  pod["spec"]["nodeSelector"] = {{"pool", "gpu"}};
  pod["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "w";
  CHECK(ajs::Validate(changed, &js, nullptr).ok());
  CHECK(ajs::Subdomain(js) == "tj");
}

}  // namespace
}  // namespace pjemu::jobset
