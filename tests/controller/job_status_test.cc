// Given a job, its pods and services and a fake `now`, ComputeJobStatus and its pieces should
// decide as the Training Operator v1.9.4 does (T26-T28, T31-T42, T45-T47, T51-T58, T60, T61).
#include "emulator/pytorchjob/job_status.h"

#include <catch2/catch.hpp>

#include "emulator/pytorchjob/conditions.h"
#include "tests/controller/job_builder.h"

namespace pjemu::pytorchjob {
namespace {

using testing::JobBuilder;
using testing::PodIn;
using testing::ServiceFor;
using Kind = Action::Kind;
using api::HasCondition, api::IsFailed, api::IsSucceeded, api::IsSuspended, api::JobReason,
    api::ManagedByExternalController;
using api::kCreated, api::kFailed, api::kRestarting, api::kRunning, api::kSucceeded,
    api::kSuspended;

const Time kT0 = FakeClock().Now();

std::vector<std::string> Names(const Sync& s, Kind kind, const api::ResourceType& type) {
  std::vector<std::string> out;
  for (const auto& a : s.actions) {
    if (a.Is(kind, type)) out.push_back(a.name);
  }
  return out;
}

std::vector<std::string> Reasons(const Sync& s) {
  std::vector<std::string> out;
  for (const auto& a : s.actions) {
    if (a.kind == Kind::kEvent) out.push_back(a.reason);
  }
  return out;
}

// type/status/reason of every condition, in order.
std::vector<std::string> Conds(const Json& status) {
  std::vector<std::string> out;
  for (const Json& c : status.value("conditions", Json::array())) {
    out.push_back(c["type"].get<std::string>() + "/" + c["status"].get<std::string>() + "/" +
                  c["reason"].get<std::string>());
  }
  return out;
}

Json WithCondition(Json job, const char* type) {
  UpdateJobConditions(job["status"], kCreated, "True", "PyTorchJobCreated", "c", kT0);
  UpdateJobConditions(job["status"], type, "True", JobReason(type), "m", kT0);
  return job;
}

Json WithRestarts(Json pod, int restarts) {
  pod["status"]["containerStatuses"] = Json::array({{{"name", "pytorch"},
                                                     {"restartCount", restarts},
                                                     {"state", {{"running", Json::object()}}}}});
  return pod;
}

Json Terminated(Json pod, int exit_code) {
  pod["status"]["containerStatuses"] =
      Json::array({{{"name", "pytorch"},
                    {"state", {{"terminated", {{"exitCode", exit_code}, {"reason", "Error"}}}}}}});
  return pod;
}

// A Master 1 + Worker n job with every pod in `phase` and every service present.
struct World {
  Json job;
  std::vector<Json> pods;
  std::vector<Json> services;
};
World MakeWorld(JobBuilder b, int workers, const std::string& phase) {
  World w;
  w.job = b.Defaulted();
  w.pods.push_back(PodIn(w.job, "Master", 0, phase));
  w.services.push_back(ServiceFor(w.job, "Master", 0));
  for (int i = 0; i < workers; ++i) {
    w.pods.push_back(PodIn(w.job, "Worker", i, phase));
    w.services.push_back(ServiceFor(w.job, "Worker", i));
  }
  return w;
}

TEST_CASE("a new job creates every pod and service in one pass and sets startTime",
          "[controller]") {
  Json job = JobBuilder("mnist").Master(1).Worker(2).Defaulted();
  Sync s = ComputeJobStatus(job, {}, {}, kT0);
  CHECK(Names(s, Kind::kCreate, api::Pods()) ==
        std::vector<std::string>{"mnist-master-0", "mnist-worker-0", "mnist-worker-1"});
  CHECK(Names(s, Kind::kCreate, api::Services()) ==
        std::vector<std::string>{"mnist-master-0", "mnist-worker-0", "mnist-worker-1"});
  CHECK(s.status["startTime"] == "2024-01-01T00:00:00Z");
  CHECK(Conds(s.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated"});
  CHECK(s.status["replicaStatuses"]["Worker"] ==
        Json{{"selector",
              "training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name="
              "pytorchjob-controller,training.kubeflow.org/replica-type=worker"}});
  CHECK(s.status_changed);
}

TEST_CASE("running master: Running condition - master success: Succeeded - Running flips False",
          "[controller]") {
  World w = MakeWorld(JobBuilder("j").Master(1).Worker(1), 1, "Running");
  Sync run = ComputeJobStatus(w.job, w.pods, w.services, kT0);
  CHECK(Conds(run.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                      "Running/True/PyTorchJobRunning"});
  CHECK(run.status["conditions"][1]["message"] == "PyTorchJob j is running.");
  CHECK(run.status["replicaStatuses"]["Master"]["active"] == 1);
  w.job["status"] = run.status;
  w.pods[0]["status"]["phase"] = "Succeeded";
  Sync done = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 10s);
  CHECK(Conds(done.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                       "Running/False/PyTorchJobRunning",
                                                       "Succeeded/True/PyTorchJobSucceeded"});
  CHECK(done.status["completionTime"] == "2024-01-01T00:00:10Z");
  CHECK(done.status["conditions"][2]["message"] == "PyTorchJob j is successfully completed.");
  // Worker still running is ignored (BEHAVIOUR.md quirk Q1) and left alone with cleanPodPolicy
  // None.
  w.job["status"] = done.status;
  Sync after = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 11s);
  CHECK(Names(after, Kind::kDelete, api::Pods()).empty());
  CHECK(after.status["replicaStatuses"]["Worker"]["succeeded"] == 1);
  CHECK_FALSE(after.status["replicaStatuses"]["Worker"].contains("active"));
}

TEST_CASE("worker-only messages carry the namespace", "[controller]") {
  World w;
  w.job = JobBuilder("w").Worker(1).Defaulted();
  w.pods = {PodIn(w.job, "Worker", 0, "Running")};
  Sync s = ComputeJobStatus(w.job, w.pods, {ServiceFor(w.job, "Worker", 0)}, kT0);
  CHECK(s.status["conditions"][1]["message"] == "PyTorchJob default/w is running.");
  w.pods[0]["status"]["phase"] = "Succeeded";
  w.job["status"] = s.status;
  s = ComputeJobStatus(w.job, w.pods, {}, kT0);
  CHECK(s.status["conditions"][2]["message"] == "PyTorchJob default/w successfully completed.");
}

TEST_CASE("elastic success rule: any worker success succeeds the job (#1752)", "[controller]") {
  Json job = JobBuilder("e").Worker(3).Set("/spec/elasticPolicy", Json::object()).Defaulted();
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Succeeded"),
                            PodIn(job, "Worker", 1, "Running"), PodIn(job, "Worker", 2, "Running")};
  CHECK(IsSucceeded(ComputeJobStatus(job, pods, {}, kT0).status));
  Json plain = JobBuilder("e").Worker(3).Defaulted();
  CHECK_FALSE(IsSucceeded(ComputeJobStatus(plain, pods, {}, kT0).status));
}

TEST_CASE("pod-path Restarting message stays when nothing else runs", "[controller]") {
  Json job = JobBuilder("j").Worker(2).Defaulted();
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Failed"), PodIn(job, "Worker", 1, "Pending")};
  Sync s = ComputeJobStatus(job, pods, {}, kT0);
  CHECK(s.status["conditions"][1]["message"] ==
        "job j is restarting because Worker replica(s) failed.");
}

TEST_CASE("OnFailure: a Failed pod is deleted - Restarting set - then re-created", "[controller]") {
  World w = MakeWorld(JobBuilder("j").Master(1).Worker(1), 1, "Running");
  w.job["status"] = ComputeJobStatus(w.job, w.pods, w.services, kT0).status;
  w.pods[1]["status"]["phase"] = "Failed";
  Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 5s);
  CHECK(Names(s, Kind::kDelete, api::Pods()) == std::vector<std::string>{"j-worker-0"});
  CHECK(Conds(s.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                    "Restarting/True/PyTorchJobRestarting"});
  // The running Master re-sets Running in UpdateJobStatus, which drops the pod-path Restarting;
  // the status path then appends its own message.
  CHECK(s.status["conditions"][1]["message"] ==
        "PyTorchJob j is restarting because 1 Worker replica(s) failed.");
  w.job["status"] = s.status;
  w.pods.pop_back();  // the deleted pod is gone
  Sync again = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 6s);
  CHECK(Names(again, Kind::kCreate, api::Pods()) == std::vector<std::string>{"j-worker-0"});
}

TEST_CASE("Never: a failed worker fails the whole job while the master runs (#1579)",
          "[controller]") {
  World w = MakeWorld(JobBuilder("j").Master(1, "Never").Worker(1, "Never"), 1, "Running");
  w.pods[1]["status"]["phase"] = "Failed";
  Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0);
  CHECK(Conds(s.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                    "Running/False/PyTorchJobRunning",
                                                    "Failed/True/PyTorchJobFailed"});
  CHECK(s.status["conditions"][2]["message"] ==
        "PyTorchJob j is failed because 1 Worker replica(s) failed.");
  CHECK(Names(s, Kind::kDelete, api::Pods()).empty());
  CHECK(s.status["completionTime"] == "2024-01-01T00:00:00Z");
}

TEST_CASE("Failed is terminal: no later condition changes", "[controller]") {
  Json job = WithCondition(JobBuilder("j").Master(1).Defaulted(), kFailed);
  Json before = job["status"];
  UpdateJobConditions(job["status"], kRunning, "True", "PyTorchJobRunning", "x", kT0 + 1s);
  CHECK(job["status"] == before);
}

TEST_CASE("T26: created suspended gives no pods - no startTime - conditions Created then Suspended",
          "[controller]") {
  Json job = JobBuilder("test-job").Worker(1).Set("/spec/runPolicy/suspend", true).Defaulted();
  Sync s = ComputeJobStatus(job, {}, {}, kT0);
  CHECK(s.actions.size() == 1);  // the PyTorchJobSuspended event only
  CHECK(Reasons(s) == std::vector<std::string>{"PyTorchJobSuspended"});
  CHECK_FALSE(s.status.contains("startTime"));
  CHECK(Conds(s.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                    "Suspended/True/PyTorchJobSuspended"});
  CHECK(s.status["conditions"][0]["message"] == "PyTorchJob test-job is created.");
  CHECK(s.status["conditions"][1]["message"] == "PyTorchJob test-job is suspended.");
}

TEST_CASE("T27: run - suspend (pods deleted - Running False) - resume (new startTime)",
          "[controller]") {
  World w = MakeWorld(JobBuilder("test-job").Master(1).Worker(1), 1, "Running");
  Sync run = ComputeJobStatus(w.job, w.pods, w.services, kT0);
  w.job["status"] = run.status;
  w.job["spec"]["runPolicy"]["suspend"] = true;
  Sync sus = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 5s);
  CHECK(Names(sus, Kind::kDelete, api::Pods()) ==
        std::vector<std::string>{"test-job-master-0", "test-job-worker-0"});
  CHECK(Names(sus, Kind::kDelete, api::Services()) ==
        std::vector<std::string>{"test-job-master-0", "test-job-worker-0"});
  CHECK(Conds(sus.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                      "Running/False/PyTorchJobSuspended",
                                                      "Suspended/True/PyTorchJobSuspended"});
  CHECK(sus.status["startTime"] == run.status["startTime"]);
  CHECK_FALSE(sus.status["replicaStatuses"]["Master"].contains("active"));
  w.job["status"] = sus.status;
  w.job["spec"]["runPolicy"]["suspend"] = false;
  Sync res = ComputeJobStatus(w.job, {}, {}, kT0 + 20s);
  CHECK(res.status["startTime"] == "2024-01-01T00:00:20Z");
  CHECK(Names(res, Kind::kCreate, api::Pods()).size() == 2);
  CHECK(Reasons(res)[0] == "PyTorchJobResumed");
  w.job["status"] = res.status;
  Sync running = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 30s);
  CHECK(Conds(running.status) == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                          "Suspended/False/PyTorchJobResumed",
                                                          "Running/True/PyTorchJobRunning"});
}

TEST_CASE("T31: Succeeded + cleanPodPolicy Running deletes only the running pod and its service",
          "[controller]") {
  Json job = WithCondition(
      JobBuilder("j").Worker(2).Set("/spec/runPolicy/cleanPodPolicy", "Running").Defaulted(),
      kSucceeded);
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Running"),
                            PodIn(job, "Worker", 1, "Succeeded")};
  Sync s = ComputeJobStatus(job, pods, {}, kT0);
  CHECK(Names(s, Kind::kDelete, api::Pods()) == std::vector<std::string>{"j-worker-0"});
  CHECK(Names(s, Kind::kDelete, api::Services()) == std::vector<std::string>{"j-worker-0"});
}

// DeletePodsAndServices over {Running, Succeeded} pods: how many are deleted.
std::size_t Cleaned(const char* policy, const char* condition) {
  Json job = JobBuilder("j").Worker(2).Set("/spec/runPolicy/cleanPodPolicy", policy).Defaulted();
  if (condition) job = WithCondition(job, condition);
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Running"),
                            PodIn(job, "Worker", 1, "Succeeded")};
  return PodsToCleanUp(job, job.value("status", Json::object()), pods).size();
}

TEST_CASE("T32: Suspended + cleanPodPolicy Running deletes every pod", "[controller]") {
  CHECK(Cleaned("Running", kSuspended) == 2);
}

TEST_CASE("T33: Succeeded + cleanPodPolicy All deletes every pod", "[controller]") {
  CHECK(Cleaned("All", kSucceeded) == 2);
}

TEST_CASE("T34: Failed + cleanPodPolicy None keeps every pod", "[controller]") {
  CHECK(Cleaned("None", kFailed) == 0);
}

TEST_CASE("T35: Suspended + cleanPodPolicy None deletes every pod", "[controller]") {
  CHECK(Cleaned("None", kSuspended) == 2);
}

TEST_CASE("T36: no condition + cleanPodPolicy None deletes every pod (v1.9.4)", "[controller]") {
  CHECK(Cleaned("None", nullptr) == 2);
}

TEST_CASE("T37: PastBackoffLimit with limit 0 - no restarts is false", "[controller]") {
  Json job = JobBuilder("j").Worker(2).Set("/spec/runPolicy/backoffLimit", 0).Defaulted();
  CHECK_FALSE(PastBackoffLimit(job, {WithRestarts(PodIn(job, "Worker", 0, "Running"), 0),
                                     PodIn(job, "Worker", 1, "Succeeded")}));
}

TEST_CASE("T38: PastBackoffLimit with limit 3 and a running pod restarted 3 times is true",
          "[controller]") {
  Json job = JobBuilder("j").Worker(2).Set("/spec/runPolicy/backoffLimit", 3).Defaulted();
  CHECK(PastBackoffLimit(job, {WithRestarts(PodIn(job, "Worker", 0, "Running"), 3),
                               PodIn(job, "Worker", 1, "Succeeded")}));
  // Never replicas are not counted.
  Json never =
      JobBuilder("j").Worker(2, "Never").Set("/spec/runPolicy/backoffLimit", 3).Defaulted();
  CHECK_FALSE(PastBackoffLimit(never, {WithRestarts(PodIn(never, "Worker", 0, "Running"), 3)}));
}

TEST_CASE("T39: PastActiveDeadline with ads 0 and startTime now is true", "[controller]") {
  Json job = JobBuilder("j").Worker(1).Set("/spec/runPolicy/activeDeadlineSeconds", 0).Defaulted();
  CHECK(PastActiveDeadline(job, {{"startTime", FormatTime(kT0)}}, kT0));
}

TEST_CASE("T40: PastActiveDeadline with ads 2 and startTime now is false", "[controller]") {
  Json job = JobBuilder("j").Worker(1).Set("/spec/runPolicy/activeDeadlineSeconds", 2).Defaulted();
  CHECK_FALSE(PastActiveDeadline(job, {{"startTime", FormatTime(kT0)}}, kT0));
  CHECK(PastActiveDeadline(job, {{"startTime", FormatTime(kT0)}}, kT0 + 2s));
}

TEST_CASE("T41: ManagedByExternalController", "[controller]") {
  auto managed = [](Json value) {
    Json job = JobBuilder("j").Worker(1).Build();
    if (!value.is_null()) job["spec"]["runPolicy"]["managedBy"] = value;
    return ManagedByExternalController(job);
  };
  CHECK(managed(nullptr) == std::nullopt);
  CHECK(managed("") == std::optional<std::string>(""));
  CHECK(managed("kubeflow.org/training-operator") == std::nullopt);
  CHECK(managed("kueue.x-k8s.io/multikueue") ==
        std::optional<std::string>("kueue.x-k8s.io/multikueue"));
  CHECK(managed("other") == std::optional<std::string>("other"));
}

TEST_CASE("T42: backoff-limit failure respects cleanPodPolicy (v1.9.4 #3420)", "[controller]") {
  auto deleted = [](const char* policy) {
    Json job = JobBuilder("j")
                   .Worker(2)
                   .Set("/spec/runPolicy/backoffLimit", 0)
                   .Set("/spec/runPolicy/cleanPodPolicy", policy)
                   .Defaulted();
    std::vector<Json> pods = {WithRestarts(PodIn(job, "Worker", 0, "Running"), 1),
                              PodIn(job, "Worker", 1, "Running")};
    Sync s = ComputeJobStatus(job, pods, {}, kT0);
    CHECK(IsFailed(s.status));
    CHECK(s.status["conditions"].back()["message"] ==
          "Job j has failed because it has reached the specified backoff limit");
    return Names(s, Kind::kDelete, api::Pods()).size();
  };
  CHECK(deleted("None") == 0);
  CHECK(deleted("All") == 2);
  CHECK(deleted("Running") == 2);
  // Not finished yet (e.g. suspended) + None: everything is deleted.
  Json job = JobBuilder("j").Worker(2).Defaulted();
  CHECK(PodsToCleanUp(job, Json::object(),
                      {PodIn(job, "Worker", 0, "Running"), PodIn(job, "Worker", 1, "Running")})
            .size() == 2);
}

TEST_CASE(
    "backoffLimit 0: a new Failed pod while others are active fails the job "
    "(exceedsBackoffLimit)",
    "[controller]") {
  Json job = JobBuilder("j").Worker(2).Set("/spec/runPolicy/backoffLimit", 0).Defaulted();
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Failed"), PodIn(job, "Worker", 1, "Running")};
  Sync s = ComputeJobStatus(job, pods, {}, kT0);
  REQUIRE(IsFailed(s.status));
  CHECK(s.status["conditions"].back()["message"] ==
        "Job j has failed because it has reached the specified backoff limit");
  // With backoffLimit 1 the same history only restarts the pod (the fake queue's count is 0).
  Json one = JobBuilder("j").Worker(2).Set("/spec/runPolicy/backoffLimit", 1).Defaulted();
  CHECK_FALSE(IsFailed(ComputeJobStatus(one, pods, {}, kT0).status));
}

TEST_CASE("T45: slice size is max(replicas - highest index + 1)", "[controller]") {
  Json job = JobBuilder("j").Worker(5).Defaulted();
  std::vector<Json> three = {PodIn(job, "Worker", 0, ""), PodIn(job, "Worker", 1, ""),
                             PodIn(job, "Worker", 2, "")};
  CHECK(SliceSize(three, 3) == 3);
  CHECK(SliceSize(three, 4) == 4);
  CHECK(SliceSize(three, 2) == 3);
  std::vector<Json> gap = three;
  gap.push_back(PodIn(job, "Worker", 4, ""));
  CHECK(SliceSize(gap, 3) == 5);
}

TEST_CASE("T46: FilterForReplicaType matches the replica-type label only", "[controller]") {
  auto obj = [](const char* name, const char* type) {
    return Json{
        {"metadata", {{"name", name}, {"labels", {{"training.kubeflow.org/replica-type", type}}}}}};
  };
  std::vector<Json> objs = {obj("a", "foo"), obj("b", "bar"), obj("c", "foo"), obj("d", "bar"),
                            obj("e", "foo")};
  std::vector<std::string> names;
  for (const Json& o : FilterForReplicaType(objs, "foo")) names.push_back(o["metadata"]["name"]);
  CHECK(names == std::vector<std::string>{"a", "c", "e"});
}

TEST_CASE("T47: replica counts: Running+deletionTimestamp counts as failed", "[controller]") {
  Json rs = Json::object();
  Json job = JobBuilder("j").Worker(1).Defaulted();
  for (const char* phase : {"Failed", "Failed", "Succeeded", "Succeeded", "Succeeded", "Running"}) {
    CountPod(rs, PodIn(job, "Worker", 0, phase));
  }
  Json deleting = PodIn(job, "Worker", 0, "Running");
  deleting["metadata"]["deletionTimestamp"] = FormatTime(kT0);
  CountPod(rs, deleting);
  CHECK(rs == Json{{"failed", 3}, {"succeeded", 3}, {"active", 1}});
  CountPod(rs, PodIn(job, "Worker", 0, "Pending"));  // Pending is invisible
  CHECK(rs == Json{{"failed", 3}, {"succeeded", 3}, {"active", 1}});
}

TEST_CASE("T51: exit codes >= 128 are retryable", "[controller]") {
  for (int code : {1, 2, 3}) CHECK_FALSE(IsRetryableExitCode(code));
  for (int code : {130, 138}) CHECK(IsRetryableExitCode(code));
}

TEST_CASE("T52: IsSuspended", "[controller]") {
  Json job = JobBuilder("j").Worker(1).Build();
  CHECK_FALSE(IsSuspended(job));
  job["spec"]["runPolicy"] = Json::object();
  CHECK_FALSE(IsSuspended(job));
  job["spec"]["runPolicy"]["suspend"] = false;
  CHECK_FALSE(IsSuspended(job));
  job["spec"]["runPolicy"]["suspend"] = true;
  CHECK(IsSuspended(job));
}

TEST_CASE("T53: succeeded job with running pods: All and Running delete every pod",
          "[controller]") {
  for (const char* policy : {"All", "Running"}) {
    CAPTURE(policy);
    World w =
        MakeWorld(JobBuilder("j").Master(1).Worker(5).Set("/spec/runPolicy/cleanPodPolicy", policy),
                  5, "Running");
    w.job = WithCondition(w.job, kSucceeded);
    Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0);
    CHECK(Names(s, Kind::kDelete, api::Pods()).size() == 6);
    CHECK(Names(s, Kind::kDelete, api::Services()).size() == 6);
  }
}

TEST_CASE("T54: succeeded job with succeeded pods: Running and None keep every pod",
          "[controller]") {
  for (const char* policy : {"Running", "None"}) {
    CAPTURE(policy);
    World w =
        MakeWorld(JobBuilder("j").Master(1).Worker(5).Set("/spec/runPolicy/cleanPodPolicy", policy),
                  5, "Succeeded");
    w.job = WithCondition(w.job, kSucceeded);
    CHECK(Names(ComputeJobStatus(w.job, w.pods, w.services, kT0), Kind::kDelete, api::Pods())
              .empty());
  }
}

TEST_CASE("T55: activeDeadlineSeconds 2 after 2 s fails the job and deletes pods", "[controller]") {
  World w = MakeWorld(
      JobBuilder("j").Master(1).Worker(5).Set("/spec/runPolicy/cleanPodPolicy", "Running"), 5,
      "Running");
  w.job["status"] = ComputeJobStatus(w.job, w.pods, w.services, kT0).status;
  CHECK(Names(ComputeJobStatus(w.job, w.pods, w.services, kT0 + 2s), Kind::kDelete, api::Pods())
            .empty());
  w.job["spec"]["runPolicy"]["activeDeadlineSeconds"] = 2;
  Sync early = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 1s);
  CHECK_FALSE(IsFailed(early.status));
  REQUIRE(early.requeue_after);
  CHECK(*early.requeue_after == 1s);  // pjemu fires at the deadline itself (BEHAVIOUR.md D1)
  Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0 + 2s);
  CHECK(Names(s, Kind::kDelete, api::Pods()).size() == 6);
  CHECK(Names(s, Kind::kDelete, api::Services()).size() == 6);
  CHECK(s.status["conditions"].back()["message"] ==
        "Job j has failed because it was active longer than specified deadline");
  CHECK(s.status["completionTime"] == "2024-01-01T00:00:02Z");
}

TEST_CASE("T56: backoffLimit 4 with four workers restarted once each fails and cleans up",
          "[controller]") {
  Json job = JobBuilder("j")
                 .Worker(4)
                 .Set("/spec/runPolicy/backoffLimit", 4)
                 .Set("/spec/runPolicy/cleanPodPolicy", "Running")
                 .Defaulted();
  std::vector<Json> pods;
  std::vector<Json> svcs;
  for (int i = 0; i < 4; ++i) {
    pods.push_back(WithRestarts(PodIn(job, "Worker", i, "Running"), 1));
    svcs.push_back(ServiceFor(job, "Worker", i));
  }
  Sync s = ComputeJobStatus(job, pods, svcs, kT0);
  CHECK(IsFailed(s.status));
  CHECK(Names(s, Kind::kDelete, api::Pods()).size() == 4);
  CHECK(Names(s, Kind::kDelete, api::Services()).size() == 4);
}

TEST_CASE("T57: TTL 3 s deletes a succeeded or failed job after expiry", "[controller]") {
  for (const char* cond : {kSucceeded, kFailed}) {
    CAPTURE(cond);
    Json job =
        JobBuilder("j").Worker(1).Set("/spec/runPolicy/ttlSecondsAfterFinished", 3).Defaulted();
    job = WithCondition(job, cond);
    job["status"]["completionTime"] = FormatTime(kT0);
    Sync early = ComputeJobStatus(job, {}, {}, kT0 + 1s);
    CHECK(Names(early, Kind::kDelete, api::PyTorchJobs()).empty());
    REQUIRE(early.requeue_after);
    CHECK(*early.requeue_after == 2s);
    CHECK(Names(ComputeJobStatus(job, {}, {}, kT0 + 3s), Kind::kDelete, api::PyTorchJobs()) ==
          std::vector<std::string>{"j"});
  }
}

TEST_CASE("T58: CleanupJob table", "[controller]") {
  auto decide = [](std::optional<int> ttl, bool suspended, std::optional<Duration> finished_ago) {
    JobBuilder b("j");
    b.Worker(1);
    if (ttl) b.Set("/spec/runPolicy/ttlSecondsAfterFinished", *ttl);
    if (suspended) b.Set("/spec/runPolicy/suspend", true);
    Json status = Json::object();
    if (finished_ago) status["completionTime"] = FormatTime(kT0 + 1000h - *finished_ago);
    return CleanupJob(b.Defaulted(), status, kT0 + 1000h);
  };
  TtlDecision d = decide(std::nullopt, false, std::nullopt);
  CHECK((d.error.ok() && !d.delete_job));
  d = decide(std::nullopt, true, std::nullopt);
  CHECK((d.error.ok() && !d.delete_job));
  d = decide(10, true, std::nullopt);
  CHECK((d.error.ok() && !d.delete_job));
  d = decide(10, false, std::nullopt);
  CHECK(d.error.message() == "job completion time is nil, cannot cleanup");
  CHECK_FALSE(d.delete_job);
  CHECK(decide(180, false, 24h).delete_job);
  CHECK(decide(0, false, 0s).delete_job);
}

TEST_CASE("T60: ExitCode policy - exit 130 is retryable: the pod is deleted", "[controller]") {
  World w = MakeWorld(JobBuilder("j").Master(1).Worker(1, "ExitCode"), 1, "Running");
  w.pods[1] = Terminated(w.pods[1], 130);
  w.pods[1]["status"]["phase"] = "Failed";
  Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0);
  CHECK(Names(s, Kind::kDelete, api::Pods()) == std::vector<std::string>{"j-worker-0"});
  CHECK_FALSE(IsFailed(s.status));
  CHECK(HasCondition(s.status, kRestarting));
}

TEST_CASE("T61: ExitCode policy - exit 1 fails the job without completionTime", "[controller]") {
  World w = MakeWorld(JobBuilder("j").Master(1).Worker(1, "ExitCode"), 1, "Running");
  w.pods[1] = Terminated(w.pods[1], 1);
  w.pods[1]["status"]["phase"] = "Failed";
  Sync s = ComputeJobStatus(w.job, w.pods, w.services, kT0);
  CHECK(Names(s, Kind::kDelete, api::Pods()).empty());
  REQUIRE(IsFailed(s.status));
  const Json& failed = s.status["conditions"].back();
  CHECK(failed["reason"] == "PyTorchJobFailed");
  CHECK(failed["message"] == "job \"j\" is failing because \"Worker\" replica(s) failed.");
  CHECK_FALSE(s.status.contains("completionTime"));  // BEHAVIOUR.md Q3: ExitCode path omits it
  // Quirk: UpdateJobStatus still emits the Restarting event (its condition is frozen by Failed).
  CHECK(Reasons(s) ==
        std::vector<std::string>{"ExitedWithCode", "PyTorchJobFailed", "PyTorchJobRestarting"});
}

TEST_CASE("quirk: ExitCode failure with a TTL never TTL-deletes (nil completionTime error)",
          "[controller]") {
  Json job = WithCondition(JobBuilder("j")
                               .Worker(1, "ExitCode")
                               .Set("/spec/runPolicy/ttlSecondsAfterFinished", 0)
                               .Defaulted(),
                           kFailed);
  Sync s = ComputeJobStatus(job, {}, {}, kT0 + 1h);
  CHECK(Names(s, Kind::kDelete, api::PyTorchJobs()).empty());
  CHECK(s.error.message() == "job completion time is nil, cannot cleanup");
}

TEST_CASE("quirk: backoffLimit > 0 never fires for Never-policy restarts (#2045)", "[controller]") {
  Json job = JobBuilder("j").Worker(2, "Never").Set("/spec/runPolicy/backoffLimit", 1).Defaulted();
  std::vector<Json> pods = {WithRestarts(PodIn(job, "Worker", 0, "Running"), 5),
                            PodIn(job, "Worker", 1, "Running")};
  CHECK_FALSE(IsFailed(ComputeJobStatus(job, pods, {}, kT0).status));
}

TEST_CASE("scale down: pods and services with index >= replicas are deleted", "[controller]") {
  Json job = JobBuilder("j").Worker(3).Defaulted();
  std::vector<Json> pods = {PodIn(job, "Worker", 0, "Running"), PodIn(job, "Worker", 1, "Running"),
                            PodIn(job, "Worker", 2, "Running")};
  std::vector<Json> svcs = {ServiceFor(job, "Worker", 0), ServiceFor(job, "Worker", 1),
                            ServiceFor(job, "Worker", 2)};
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 1;
  Sync s = ComputeJobStatus(job, pods, svcs, kT0);
  CHECK(Names(s, Kind::kDelete, api::Pods()) ==
        std::vector<std::string>{"j-worker-1", "j-worker-2"});
  CHECK(Names(s, Kind::kDelete, api::Services()) ==
        std::vector<std::string>{"j-worker-1", "j-worker-2"});
  CHECK(Names(s, Kind::kCreate, api::Pods()).empty());
}

TEST_CASE("abnormal pod events: waiting message - terminated non-zero - unschedulable",
          "[controller]") {
  Json job = JobBuilder("j").Worker(3).Defaulted();
  Json waiting = PodIn(job, "Worker", 0, "Pending");
  waiting["status"]["containerStatuses"] = Json::array(
      {{{"name", "pytorch"},
        {"state", {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "no image"}}}}}}});
  Json unsched = PodIn(job, "Worker", 1, "Pending");
  unsched["status"]["conditions"] = Json::array({{{"type", "PodScheduled"},
                                                  {"status", "False"},
                                                  {"reason", "Unschedulable"},
                                                  {"message", "0/1 nodes"},
                                                  {"lastTransitionTime", FormatTime(kT0)}}});
  Json crashed = Terminated(PodIn(job, "Worker", 2, "Running"), 2);
  Sync s = ComputeJobStatus(job, {waiting, unsched, crashed}, {}, kT0);
  std::vector<std::string> messages;
  for (const auto& a : s.actions) {
    if (a.kind == Kind::kEvent) messages.push_back(a.event_type + " " + a.reason + " " + a.message);
  }
  CHECK(messages == std::vector<std::string>{
                        "Warning ImagePullBackOff Error pod j-worker-0 container pytorch waiting "
                        "message: no image",
                        "Warning Unschedulable Error pod j-worker-1 condition message: 0/1 nodes",
                        "Warning Error Error pod j-worker-2 container pytorch exitCode: 2 "
                        "terminated message: ",
                        "Normal ExitedWithCode Pod: default.j-worker-2 exited with code 2"});
}

TEST_CASE("a template restartPolicy is overwritten with a SetPodTemplateRestartPolicy warning",
          "[controller]") {
  Json job = JobBuilder("j")
                 .Worker(1, "Never")
                 .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/restartPolicy", "Always")
                 .Defaulted();
  Sync s = ComputeJobStatus(job, {}, {}, kT0);
  CHECK(Reasons(s) == std::vector<std::string>{"SetPodTemplateRestartPolicy"});
  CHECK(s.actions[1].object["spec"]["restartPolicy"] == "Never");
}

}  // namespace
}  // namespace pjemu::pytorchjob
