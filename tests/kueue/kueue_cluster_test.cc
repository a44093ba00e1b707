// Queued jobs of every kind Kueue integrates, through a whole cluster on a virtual clock with
// simulated processes: quota is never exceeded, jobs start in the queue's order, a higher
// priority preempts, and the preempted job is requeued and later succeeds.
#include <catch2/catch.hpp>

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/workload.h"
#include "emulator/cluster/cluster.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
using cluster::ClusterOptions;

ClusterOptions Virtual() {
  ClusterOptions o;
  o.clock = cluster::ClockKind::kVirtual;
  o.processes = cluster::ProcessKind::kSimulated;
  o.loop = cluster::LoopKind::kCaller;
  o.gpus = 2;
  o.cpu = "16";
  o.memory = "64Gi";
  o.script = [](const process::ProcessSpec&) {
    process::SimulatedOutcome out;
    out.runtime = std::chrono::minutes(10);
    return out;
  };
  return o;
}

const Json kGpuContainer = {{"name", "c"},
                            {"image", "busybox"},
                            {"command", {"sh", "-c", "train"}},
                            {"resources", {{"limits", {{"nvidia.com/gpu", 1}}}}}};

Json Labels(const std::string& priority) {
  Json l = {{ak::kQueueNameLabel, "team-queue"}};
  if (!priority.empty()) l[ak::kPriorityClassLabel] = priority;
  return l;
}

Json Meta(const std::string& name, const std::string& priority) {
  return {{"name", name}, {"namespace", "default"}, {"labels", Labels(priority)}};
}

Json PodTemplate() {
  return {{"spec", {{"restartPolicy", "Never"}, {"containers", {kGpuContainer}}}}};
}

// One job of each integrated kind, each with one pod of one GPU.
std::pair<const api::ResourceType*, Json> Job(const std::string& kind, const std::string& name,
                                              const std::string& priority = "") {
  if (kind == "Job") {
    return {&api::Jobs(), {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", Meta(name, priority)},
                           {"spec", {{"template", PodTemplate()}}}}};
  }
  if (kind == "JobSet") {
    return {&api::JobSets(),
            {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"metadata", Meta(name, priority)},
             {"spec", {{"replicatedJobs", {{{"name", "w"}, {"replicas", 1},
                                            {"template", {{"spec", {{"template", PodTemplate()}}}}}}}}}}}};
  }
  if (kind == "PyTorchJob") {
    Json tmpl = PodTemplate();
    tmpl["spec"]["containers"][0]["name"] = "pytorch";
    return {&api::PyTorchJobs(),
            {{"apiVersion", "kubeflow.org/v1"}, {"kind", "PyTorchJob"}, {"metadata", Meta(name, priority)},
             {"spec", {{"pytorchReplicaSpecs", {{"Master", {{"replicas", 1}, {"restartPolicy", "Never"},
                                                              {"template", tmpl}}}}}}}}};
  }
  return {&api::TrainJobs(),
          {{"apiVersion", "trainer.kubeflow.org/v1alpha1"}, {"kind", "TrainJob"}, {"metadata", Meta(name, priority)},
           {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}},
                     {"trainer", {{"numNodes", 1}, {"image", "busybox"}, {"command", {"sh", "-c", "train"}},
                                  {"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", 1}}}}}}}}}}};
}

struct Fixture {
  cluster::Cluster c{Virtual()};
  Fixture() {
    REQUIRE(c.Start().ok());
    client::Client& k = c.client();
    REQUIRE(k.Create(ak::ResourceFlavors(), "", {{"metadata", {{"name", "default-flavor"}}}}).ok());
    REQUIRE(k.Create(ak::ClusterQueues(), "",
                     {{"metadata", {{"name", "team"}}},
                      {"spec", {{"namespaceSelector", Json::object()},
                                {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
                                {"resourceGroups", {{{"coveredResources", {"nvidia.com/gpu"}},
                                                     {"flavors", {{{"name", "default-flavor"},
                                                                   {"resources", {{{"name", "nvidia.com/gpu"},
                                                                                   {"nominalQuota", 2}}}}}}}}}}}}})
                .ok());
    REQUIRE(k.Create(ak::LocalQueues(), "default",
                     {{"metadata", {{"name", "team-queue"}}}, {"spec", {{"clusterQueue", "team"}}}})
                .ok());
    REQUIRE(k.Create(ak::WorkloadPriorityClasses(), "", {{"metadata", {{"name", "high"}}}, {"value", 1000}}).ok());
  }
  std::vector<Json> Workloads() {
    auto list = c.client().List(ak::Workloads(), "default");
    return list.ok() ? (*list)["items"].get<std::vector<Json>>() : std::vector<Json>{};
  }
  // GPUs of the admitted, unfinished Workloads.
  int AdmittedGpus() {
    int gpus = 0;
    for (const Json& wl : Workloads()) {
      if (!ak::IsTrue(wl, ak::kAdmitted) || ak::IsTrue(wl, ak::kFinished)) continue;
      for (const Json& set : api::ArrayOr(api::FieldAt(wl, {"status", "admission", "podSetAssignments"}))) {
        gpus += std::stoi(api::Str(set["resourceUsage"], "nvidia.com/gpu"));
      }
    }
    return gpus;
  }
  api::WorkloadState State(const api::ResourceType& type, const std::string& name) {
    auto job = c.client().Get(type, "default", name);
    return job.ok() ? api::StateOf(type, *job) : api::WorkloadState{};
  }
};

TEST_CASE("five GPU jobs of four kinds through one LocalQueue: quota kept, queue order, all succeed",
          "[kueue][cluster]") {
  Fixture f;
  const std::vector<std::pair<std::string, std::string>> jobs = {
      {"Job", "first"}, {"JobSet", "second"}, {"PyTorchJob", "third"}, {"TrainJob", "fourth"},
      {"Job", "fifth"}};
  std::vector<const api::ResourceType*> types;
  for (const auto& [kind, name] : jobs) {
    auto [type, object] = Job(kind, name);
    types.push_back(type);
    auto created = f.c.client().Create(*type, "default", object);
    REQUIRE(created.ok());
    f.c.Step(std::chrono::seconds(1));  // distinct creation times: the queue's order
  }
  std::vector<std::string> started;  // job names in the order their Workloads were admitted
  int most = 0;
  for (int i = 0; i < 600 && started.size() < jobs.size(); ++i) {
    f.c.Step(std::chrono::seconds(10));
    most = std::max(most, f.AdmittedGpus());
    for (const Json& wl : f.Workloads()) {
      const std::string owner = api::Str(api::FieldAt(wl, {"metadata", "ownerReferences"})[0], "name");
      if (ak::IsTrue(wl, ak::kAdmitted) &&
          std::find(started.begin(), started.end(), owner) == started.end()) {
        started.push_back(owner);
      }
    }
  }
  f.c.Step(std::chrono::minutes(30));
  CHECK(most == 2);
  CHECK(started == std::vector<std::string>{"first", "second", "third", "fourth", "fifth"});
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO(jobs[i].second);
    CHECK(f.State(*types[i], jobs[i].second).succeeded);
  }
  for (const Json& wl : f.Workloads()) {
    INFO(wl["metadata"]["name"]);
    CHECK(ak::IsTrue(wl, ak::kFinished));
    CHECK(ak::Condition(wl, ak::kFinished)->at("reason") == "Succeeded");
    CHECK(ak::IsTrue(wl, ak::kQuotaReserved));
  }
  auto cq = f.c.client().Get(ak::ClusterQueues(), "", "team");
  REQUIRE(cq.ok());
  CHECK((*cq)["status"]["admittedWorkloads"] == 0);
  CHECK((*cq)["status"]["pendingWorkloads"] == 0);
  CHECK((*cq)["status"]["conditions"][0]["reason"] == "Ready");
}

TEST_CASE("a higher priority job preempts the newest lower one, which is requeued and succeeds",
          "[kueue][cluster]") {
  Fixture f;
  for (const char* name : {"low-a", "low-b"}) {
    auto [type, object] = Job("Job", name);
    REQUIRE(f.c.client().Create(*type, "default", object).ok());
    f.c.Step(std::chrono::seconds(5));
  }
  f.c.Step(std::chrono::minutes(1));
  REQUIRE(f.AdmittedGpus() == 2);
  auto [type, urgent] = Job("PyTorchJob", "urgent", "high");
  REQUIRE(f.c.client().Create(*type, "default", urgent).ok());
  f.c.Step(std::chrono::seconds(30));
  Json victim;
  for (const Json& wl : f.Workloads()) {
    if (ak::IsTrue(wl, ak::kPreempted)) victim = wl;
  }
  REQUIRE(victim.is_object());
  CHECK(victim["metadata"]["ownerReferences"][0]["name"] == "low-b");  // the most recently admitted
  CHECK(ak::Condition(victim, ak::kEvicted)->at("reason") == "Preempted");
  CHECK(f.State(api::Jobs(), "low-b").state == "Suspended");
  CHECK(f.State(api::PyTorchJobs(), "urgent").state == "Running");
  f.c.Step(std::chrono::hours(1));
  for (const char* name : {"low-a", "low-b"}) CHECK(f.State(api::Jobs(), name).succeeded);
  CHECK(f.State(api::PyTorchJobs(), "urgent").succeeded);
  auto again = f.c.client().Get(ak::Workloads(), "default", victim["metadata"]["name"].get<std::string>());
  REQUIRE(again.ok());
  CHECK(ak::Condition(*again, ak::kEvicted)->at("status") == "False");
  CHECK(ak::Condition(*again, ak::kRequeued)->at("reason") == "Preempted");
  CHECK(ak::IsTrue(*again, ak::kFinished));
}

}  // namespace
}  // namespace pjemu::kueue
