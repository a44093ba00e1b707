// Given a Store, a LocalClient and a running Controller on a virtual-time EventLoop, jobs should
// go through the Training Operator's lifecycle end to end (T24, T26-T30, T55, T57 and the
// create-time admission), with kubelet behaviour simulated by status patches.
#include <catch2/catch.hpp>

#include "emulator/pytorchjob/conditions.h"
#include "tests/controller/job_builder.h"
#include "tests/controller/test_cluster.h"

namespace pjemu::pytorchjob {
namespace {

using api::IsFailed, api::IsSucceeded;
using testing::Cluster;
using testing::JobBuilder;

TEST_CASE("T24: Master 1 + Worker 2 creates pods and services - master success succeeds the job",
          "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("test-job").Master(1).Worker(2).Build()).ok());
  const std::vector<std::string> want = {"test-job-master-0", "test-job-worker-0",
                                         "test-job-worker-1"};
  CHECK(c.Names(api::Pods()) == want);
  CHECK(c.Names(api::Services()) == want);
  Json job = c.Job("test-job");
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Master"].count("restartPolicy") == 1);
  CHECK_FALSE(job["spec"].contains("nprocPerNode"));  // the stored spec is not defaulted
  Json pod = *c.client->Get(api::Pods(), "default", "test-job-master-0");
  CHECK(pod["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]);
  c.SetAllPhases("Running");
  CHECK(c.Conds("test-job") == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                        "Running/True/PyTorchJobRunning"});
  c.SetPhase("test-job-master-0", "Succeeded");
  job = c.Job("test-job");
  CHECK(job["status"]["replicaStatuses"]["Master"]["succeeded"] == 1);
  CHECK(IsSucceeded(job["status"]));
}

TEST_CASE("legacy selector: kubectl get pods -l pytorch_job_name=<job> lists the job's pods",
          "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("mnist").Master(1).Worker(1).Build()).ok());
  CHECK(c.Names(api::Pods(), "pytorch_job_name=mnist") ==
        std::vector<std::string>{"mnist-master-0", "mnist-worker-0"});
  CHECK(c.Names(api::Services(), "pytorch_job_name=mnist").empty());
}

TEST_CASE("an invalid job is refused at create time and nothing is created", "[controller]") {
  Cluster c;
  Status s = c.Submit(JobBuilder("bad").Master(2).Build());
  CHECK(s.code() == Code::kForbidden);
  CHECK(s.message().find("spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1") !=
        std::string::npos);
  CHECK(c.Job("bad").is_null());
  CHECK(c.Names(api::Pods()).empty());
}

TEST_CASE("T26: created suspended: no pods or services - no startTime", "[controller]") {
  Cluster c;
  REQUIRE(
      c.Submit(JobBuilder("test-job").Worker(1).Set("/spec/runPolicy/suspend", true).Build()).ok());
  c.loop.RunFor(3s);
  CHECK(c.Names(api::Pods()).empty());
  CHECK(c.Names(api::Services()).empty());
  CHECK_FALSE(c.Job("test-job")["status"].contains("startTime"));
  CHECK(c.Conds("test-job") == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                        "Suspended/True/PyTorchJobSuspended"});
}

TEST_CASE("T27: run - suspend - resume through the API", "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("test-job").Master(1).Worker(1).Build()).ok());
  c.SetAllPhases("Running");
  const Json start = c.Job("test-job")["status"]["startTime"];
  c.clock.Advance(5s);
  c.Patch("test-job", {{"spec", {{"runPolicy", {{"suspend", true}}}}}});
  CHECK(c.Names(api::Pods()).empty());
  CHECK(c.Names(api::Services()).empty());
  Json job = c.Job("test-job");
  CHECK(job["status"]["startTime"] == start);
  CHECK_FALSE(job["status"]["replicaStatuses"]["Worker"].contains("active"));
  CHECK(c.Conds("test-job") == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                        "Running/False/PyTorchJobSuspended",
                                                        "Suspended/True/PyTorchJobSuspended"});
  c.clock.Advance(5s);
  c.Patch("test-job", {{"spec", {{"runPolicy", {{"suspend", false}}}}}});
  CHECK(c.Job("test-job")["status"]["startTime"] != start);
  CHECK(c.Names(api::Pods()).size() == 2);
  CHECK(c.Names(api::Services()).size() == 2);
  c.SetAllPhases("Running");
  CHECK(c.Conds("test-job") == std::vector<std::string>{"Created/True/PyTorchJobCreated",
                                                        "Suspended/False/PyTorchJobResumed",
                                                        "Running/True/PyTorchJobRunning"});
}

TEST_CASE("T28: managedBy multikueue: the controller leaves the job alone", "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("test-job")
                       .Master(1)
                       .Worker(1)
                       .Set("/spec/runPolicy/managedBy", "kueue.x-k8s.io/multikueue")
                       .Set("/spec/runPolicy/suspend", true)
                       .Build())
              .ok());
  CHECK(c.Names(api::Pods()).empty());
  CHECK(c.Job("test-job")
            .value("status", Json::object())
            .value("conditions", Json(nullptr))
            .is_null());
  c.Patch("test-job", {{"spec", {{"runPolicy", {{"suspend", false}}}}}});
  CHECK(c.Names(api::Pods()).empty());
  CHECK(c.Job("test-job")
            .value("status", Json::object())
            .value("conditions", Json(nullptr))
            .is_null());
}

Json ElasticWithMetrics() {
  return JobBuilder("elastic-job")
      .Worker(1)
      .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/ports",
           Json::array({{{"name", "pytorchjob-port"}, {"containerPort", 8080}}}))
      .Set("/spec/elasticPolicy",
           {{"rdzvBackend", "c10d"},
            {"minReplicas", 1},
            {"maxReplicas", 3},
            {"maxRestarts", 3},
            {"metrics",
             Json::array(
                 {{{"type", "Resource"},
                   {"resource",
                    {{"name", "cpu"},
                     {"target", {{"type", "Utilization"}, {"averageUtilization", 80}}}}}}})}})
      .Build();
}

const api::ResourceType& Hpas() {
  return *api::FindResource("autoscaling", "horizontalpodautoscalers");
}

TEST_CASE("T29: elastic job: worker pod and service - HPA - success on the worker",
          "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(ElasticWithMetrics()).ok());
  CHECK(c.Names(api::Pods()) == std::vector<std::string>{"elastic-job-worker-0"});
  CHECK(c.Names(api::Services()) == std::vector<std::string>{"elastic-job-worker-0"});
  CHECK(c.Names(Hpas()) == std::vector<std::string>{"elastic-job"});
  Json svc = *c.client->Get(api::Services(), "default", "elastic-job-worker-0");
  CHECK(svc["spec"]["ports"][0]["port"] == 8080);
  Json hpa = *c.client->Get(Hpas(), "default", "elastic-job");
  CHECK(hpa["metadata"]["ownerReferences"][0]["uid"] == c.Job("elastic-job")["metadata"]["uid"]);
  c.SetPhase("elastic-job-worker-0", "Succeeded");
  Json job = c.Job("elastic-job");
  CHECK(job["status"]["replicaStatuses"]["Worker"]["succeeded"] == 1);
  CHECK(IsSucceeded(job["status"]));
}

TEST_CASE("T30: suspending an elastic job deletes its HPA", "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(ElasticWithMetrics()).ok());
  CHECK(c.Names(Hpas()).size() == 1);
  c.Patch("elastic-job", {{"spec", {{"runPolicy", {{"suspend", true}}}}}});
  CHECK(c.Names(Hpas()).empty());
  CHECK(c.Names(api::Pods()).empty());
}

TEST_CASE(
    "scaling Worker.replicas (the scale subresource's specReplicasPath) adds and removes "
    "workers - existing pods keep their env",
    "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("s").Master(1).Worker(1).Build()).ok());
  c.Patch("s", {{"spec", {{"pytorchReplicaSpecs", {{"Worker", {{"replicas", 3}}}}}}}});
  CHECK(c.Names(api::Pods()) ==
        std::vector<std::string>{"s-master-0", "s-worker-0", "s-worker-1", "s-worker-2"});
  Json w0 = *c.client->Get(api::Pods(), "default", "s-worker-0");
  CHECK(w0["spec"]["containers"][0]["env"][5] == Json{{"name", "WORLD_SIZE"}, {"value", "2"}});
  c.Patch("s", {{"spec", {{"pytorchReplicaSpecs", {{"Worker", {{"replicas", 1}}}}}}}});
  CHECK(c.Names(api::Pods()) == std::vector<std::string>{"s-master-0", "s-worker-0"});
  CHECK(c.Names(api::Services()) == std::vector<std::string>{"s-master-0", "s-worker-0"});
  CHECK(c.Job("s")["status"]["replicaStatuses"]["Worker"]["selector"] ==
        "training.kubeflow.org/job-name=s,training.kubeflow.org/operator-name="
        "pytorchjob-controller,training.kubeflow.org/replica-type=worker");
}

TEST_CASE("OnFailure restart through the API: failed pod deleted - then re-created",
          "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("r").Master(1).Worker(1).Build()).ok());
  c.SetAllPhases("Running");
  const std::string uid = (*c.client->Get(api::Pods(), "default", "r-worker-0"))["metadata"]["uid"];
  c.SetPhase("r-worker-0", "Failed");
  Json pod = *c.client->Get(api::Pods(), "default", "r-worker-0");
  CHECK(pod["metadata"]["uid"] != uid);  // a new pod with the same name
  // The running Master sets Running again on the next pass, which drops Restarting (upstream's
  // flicker); the Warning event stays.
  CHECK(c.Conds("r").back() == "Running/True/PyTorchJobRunning");
  const Json events = (*c.client->List(api::Events(), "default"))["items"];
  CHECK(std::count_if(events.begin(), events.end(), [](const Json& e) {
          return e["reason"] == "PyTorchJobRestarting" && e["type"] == "Warning";
        }) >= 1);
}

TEST_CASE("repeated events are merged: count grows", "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("x").Worker(1).Set("/spec/runPolicy/suspend", true).Build()).ok());
  c.Patch("x", {{"metadata", {{"labels", {{"a", "b"}}}}}});  // another reconcile
  const Json events = (*c.client->List(api::Events(), "default"))["items"];
  int suspended = 0;
  for (const Json& e : events) {
    if (e["reason"] != "PyTorchJobSuspended") continue;
    ++suspended;
    CHECK(e["count"].get<int>() >= 2);
  }
  CHECK(suspended == 1);
}

TEST_CASE("T55 deviation: activeDeadlineSeconds fires at the deadline without other events",
          "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("j")
                       .Master(1)
                       .Worker(1)
                       .Set("/spec/runPolicy/activeDeadlineSeconds", 10)
                       .Set("/spec/runPolicy/cleanPodPolicy", "All")
                       .Build())
              .ok());
  c.SetAllPhases("Running");
  c.loop.RunFor(9s);
  CHECK_FALSE(IsFailed(c.Job("j")["status"]));
  c.loop.RunFor(1s);
  Json job = c.Job("j");
  REQUIRE(IsFailed(job["status"]));
  CHECK(job["status"]["completionTime"] == "2024-01-01T00:00:10Z");
  CHECK(c.Names(api::Pods()).empty());
}

TEST_CASE("T57: TTL 3 s deletes the finished job at the expiry", "[controller]") {
  Cluster c;
  REQUIRE(
      c.Submit(JobBuilder("j").Worker(1).Set("/spec/runPolicy/ttlSecondsAfterFinished", 3).Build())
          .ok());
  c.SetPhase("j-worker-0", "Succeeded");
  REQUIRE(IsSucceeded(c.Job("j")["status"]));
  c.loop.RunFor(2s);
  CHECK_FALSE(c.Job("j").is_null());
  c.loop.RunFor(1s);
  CHECK(c.Job("j").is_null());
}

TEST_CASE("events are core/v1 Events on the job - repeated ones counted", "[controller]") {
  Cluster c;
  REQUIRE(c.Submit(JobBuilder("ev").Master(1).Build()).ok());
  const Json events = (*c.client->List(api::Events(), "default"))["items"];
  Json job = c.Job("ev");
  bool found = false;
  for (const Json& e : events) {
    if (e["reason"] != "SuccessfulCreatePod") continue;
    found = true;
    CHECK(e["message"] == "Created pod: ev-master-0");
    CHECK(e["type"] == "Normal");
    CHECK(e["source"]["component"] == "pytorchjob-controller");
    CHECK(e["involvedObject"]["uid"] == job["metadata"]["uid"]);
    CHECK(e["involvedObject"]["kind"] == "PyTorchJob");
    CHECK(e["count"] == 1);
  }
  CHECK(found);
}

}  // namespace
}  // namespace pjemu::pytorchjob
