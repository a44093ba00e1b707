// Given a Store with the TrainJob, JobSet and Job controllers on a virtual-time EventLoop and the
// default runtime installed, the migration guide's TrainJob should become one JobSet, one
// Indexed Job and two pods named and labelled as upstream, and Complete once the pods succeed
// (the kubelet simulated by status patches). A Job failing under a runtime with maxRestarts 1
// restarts the JobSet (status.restarts 1).
#include <catch2/catch.hpp>
#include <set>

#include "emulator/api/batchjob.h"
#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/resources.h"
#include "emulator/api/trainjob.h"
#include "emulator/api/workload.h"
#include "emulator/batchjob/batchjob.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/jobset/jobset.h"
#include "emulator/store/store.h"
#include "emulator/trainjob/trainjob.h"

namespace pjemu::trainjob {
namespace {

struct Cluster {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  controller::Controller jobs{*client, loop,
                              controller::SpecOf(batchjob::Descriptor(), *client, clock)};
  controller::Controller jobsets{*client, loop,
                                 controller::SpecOf(jobset::Descriptor(), *client, clock)};
  controller::Controller trainjobs{*client, loop, controller::SpecOf(Descriptor(), *client, clock)};

  Cluster() {
    REQUIRE(InstallDefaultRuntimes(*client).ok());
    REQUIRE(InstallDefaultRuntimes(*client).ok());  // idempotent
    REQUIRE(jobs.Start().ok());
    REQUIRE(jobsets.Start().ok());
    REQUIRE(trainjobs.Start().ok());
    loop.RunUntilIdle();
  }
  ~Cluster() {
    trainjobs.Stop();
    jobsets.Stop();
    jobs.Stop();
  }
  std::vector<Json> Pods(const std::string& selector) {
    api::ListOptions o;
    o.label_selector = selector;
    Json listed = *client->List(api::Pods(), "default", o);
    return listed["items"];
  }
  void Finish(const Json& pod, const std::string& phase, int exit) {
    Json patch = {{"status",
                   {{"phase", phase},
                    {"containerStatuses",
                     Json::array({{{"name", "node"},
                                   {"restartCount", 0},
                                   {"state", {{"terminated", {{"exitCode", exit},
                                                              {"finishedAt", FormatTime(clock.Now())}}}}}}})}}}};
    REQUIRE(client->Patch(api::Pods(), "default", pod["metadata"]["name"].get<std::string>(),
                          api::PatchType::kMerge, patch, api::Subresource::kStatus).ok());
    loop.RunUntilIdle();
  }
  Json Get(const api::ResourceType& type, const std::string& name) {
    return *client->Get(type, "default", name);
  }
};

Json GuideTrainJob(const std::string& runtime_kind = "ClusterTrainingRuntime",
                   const std::string& runtime = "torch-distributed") {
  return Json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "tj"},
    "spec": {"runtimeRef": {"name": ")" + runtime + R"(", "kind": ")" + runtime_kind + R"("},
      "trainer": {"numNodes": 2, "numProcPerNode": 2,
        "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
        "command": ["torchrun", "/opt/trainer-v2/ddp_world.py"]}}})");
}

TEST_CASE("TJ8 TrainJob -> JobSet -> Job -> pods, named and labelled as upstream, to Complete", "[trainjob]") {
  Cluster c;
  REQUIRE(c.client->Create(api::TrainJobs(), "default", GuideTrainJob()).ok());
  c.loop.RunUntilIdle();
  Json js = c.Get(api::JobSets(), "tj");
  CHECK(js["metadata"]["ownerReferences"][0]["name"] == "tj");
  Json svc = c.Get(api::Services(), "tj");
  CHECK(svc["spec"]["clusterIP"] == "None");
  Json job = c.Get(api::Jobs(), "tj-node-0");
  CHECK(job["metadata"]["labels"][api::jobset::kJobSetNameKey] == "tj");
  CHECK(job["spec"]["completionMode"] == "Indexed");
  CHECK(job["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer");
  CHECK(job["spec"]["parallelism"] == 2);
  std::vector<Json> pods = c.Pods("jobset.sigs.k8s.io/jobset-name=tj");
  REQUIRE(pods.size() == 2);
  std::set<std::string> hostnames;
  for (const Json& pod : pods) {
    const std::string name = pod["metadata"]["name"];
    CHECK(name.rfind("tj-node-0-", 0) == 0);
    hostnames.insert(pod["spec"]["hostname"].get<std::string>());
    CHECK(pod["spec"]["subdomain"] == "tj");
    const Json& labels = pod["metadata"]["labels"];
    CHECK(labels[api::jobset::kReplicatedJobNameKey] == "node");
    CHECK(labels[api::jobset::kRestartsKey] == "0");
    CHECK(labels[api::batchjob::kJobNameLabel] == "tj-node-0");
    CHECK(pod["metadata"]["annotations"].contains(api::batchjob::kCompletionIndex));
  }
  CHECK(hostnames == std::set<std::string>{"tj-node-0-0", "tj-node-0-1"});
  for (const Json& pod : pods) c.Finish(pod, "Succeeded", 0);
  Json tj = c.Get(api::TrainJobs(), "tj");
  const api::WorkloadState state = api::StateOf(tj);
  CHECK(state.state == "Complete");
  CHECK(state.reason == "AllJobsCompleted");
  CHECK(state.succeeded);
  CHECK(tj["status"]["jobsStatus"][0]["name"] == "node");
  CHECK(tj["status"]["jobsStatus"][0]["succeeded"] == 1);
  CHECK(c.Get(api::JobSets(), "tj")["status"]["terminalState"] == "Completed");
}

TEST_CASE("TJ9 a failed node Job under maxRestarts 1 restarts the JobSet once", "[trainjob]") {
  Cluster c;
  Json runtime = api::trainjob::DefaultClusterTrainingRuntime();
  runtime["kind"] = "TrainingRuntime";
  runtime["metadata"] = {{"name", "torch-retry"}, {"namespace", "default"}};
  runtime["spec"]["template"]["spec"]["failurePolicy"] = {{"maxRestarts", 1}};
  runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["backoffLimit"] = 0;
  REQUIRE(c.client->Create(api::TrainingRuntimes(), "default", runtime).ok());
  REQUIRE(c.client->Create(api::TrainJobs(), "default", GuideTrainJob("TrainingRuntime", "torch-retry")).ok());
  c.loop.RunUntilIdle();
  std::vector<Json> pods = c.Pods("jobset.sigs.k8s.io/jobset-name=tj");
  REQUIRE(pods.size() == 2);
  c.Finish(pods[1], "Failed", 137);  // a node pod killed
  c.loop.RunUntilIdle();
  Json js = c.Get(api::JobSets(), "tj");
  CHECK(js["status"]["restarts"] == 1);
  Json job = c.Get(api::Jobs(), "tj-node-0");
  CHECK(job["metadata"]["labels"][api::jobset::kRestartsKey] == "1");
  std::vector<Json> again = c.Pods("jobset.sigs.k8s.io/restart-attempt=1");
  REQUIRE(again.size() == 2);
  for (const Json& pod : again) c.Finish(pod, "Succeeded", 0);
  CHECK(api::StateOf(c.Get(api::TrainJobs(), "tj")).state == "Complete");
  CHECK(c.Get(api::JobSets(), "tj")["status"]["restarts"] == 1);
}

TEST_CASE("TJ15 a coscheduled runtime: the TrainJob's PodGroup before its pods, which join it", "[trainjob][gang]") {
  Cluster c;
  Json runtime = api::trainjob::DefaultClusterTrainingRuntime();
  runtime["kind"] = "TrainingRuntime";
  runtime["metadata"] = {{"name", "torch-gang"}, {"namespace", "default"}};
  runtime["spec"]["podGroupPolicy"] = {{"coscheduling", {{"scheduleTimeoutSeconds", 120}}}};
  runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
         ["schedulerName"] = api::kSchedulerPluginsSchedulerName;
  REQUIRE(c.client->Create(api::TrainingRuntimes(), "default", runtime).ok());
  Json tj = GuideTrainJob("TrainingRuntime", "torch-gang");
  tj["spec"]["trainer"]["resourcesPerNode"] = {{"requests", {{"nvidia.com/gpu", 1}}}};
  REQUIRE(c.client->Create(api::TrainJobs(), "default", tj).ok());
  c.loop.RunUntilIdle();
  Json pg = c.Get(api::SchedulerPluginsPodGroups(), "tj");
  CHECK(pg["metadata"]["ownerReferences"][0]["kind"] == "TrainJob");
  CHECK(pg["metadata"]["ownerReferences"][0]["uid"] == c.Get(api::TrainJobs(), "tj")["metadata"]["uid"]);
  CHECK(pg["spec"]["minMember"] == 2);
  CHECK(pg["spec"]["minResources"] == Json({{"nvidia.com/gpu", "2"}}));
  CHECK(pg["spec"]["scheduleTimeoutSeconds"] == 120);
  std::vector<Json> pods = c.Pods("scheduling.x-k8s.io/pod-group=tj");
  REQUIRE(pods.size() == 2);
  for (const Json& pod : pods) {
    CHECK(pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler");
    CHECK(api::PodGroupOf(pod)->name == "tj");
  }
  const std::string rv = pg["metadata"]["resourceVersion"];
  for (const Json& pod : pods) c.Finish(pod, "Succeeded", 0);
  CHECK(api::StateOf(c.Get(api::TrainJobs(), "tj")).state == "Complete");
  CHECK(c.Get(api::SchedulerPluginsPodGroups(), "tj")["metadata"]["resourceVersion"] == rv);
}

}  // namespace
}  // namespace pjemu::trainjob
