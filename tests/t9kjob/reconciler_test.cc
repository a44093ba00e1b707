// Given a Store, a LocalClient and both job kinds' Controllers on a virtual-time EventLoop, a
// PyTorchTrainingJob should go through T9k's lifecycle end to end through the shared controller
// machinery (kubelet behaviour simulated by status patches), and a PyTorchJob of the same name
// beside it should be left to its own controller.
#include <catch2/catch.hpp>

#include "emulator/api/resources.h"
#include "emulator/api/t9k.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/pytorchjob/pytorchjob.h"
#include "emulator/store/store.h"
#include "emulator/t9kjob/t9kjob.h"

namespace pjemu::t9kjob {
namespace {

struct Cluster {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  controller::Controller t9k{*client, loop, controller::SpecOf(Descriptor(), *client, clock)};
  controller::Controller kubeflow{*client, loop,
                                  controller::SpecOf(pytorchjob::Descriptor(), *client, clock)};

  Cluster() {
    REQUIRE(t9k.Start().ok());
    REQUIRE(kubeflow.Start().ok());
    loop.RunUntilIdle();
  }
  ~Cluster() {
    t9k.Stop();
    kubeflow.Stop();
  }
  Json Get(const api::ResourceType& type, const std::string& name) {
    auto r = client->Get(type, "default", name);
    return r.ok() ? *r : Json(nullptr);
  }
  std::vector<std::string> Names(const api::ResourceType& type, const std::string& selector) {
    api::ListOptions o;
    o.label_selector = selector;
    std::vector<std::string> out;
    const Json list = *client->List(type, "default", o);
    for (const Json& item : list["items"]) {
      out.push_back(item["metadata"]["name"]);
    }
    return out;
  }
  void SetPod(const std::string& pod, const std::string& phase, std::optional<int> exit = {}) {
    Json state = {{"running", Json::object()}};
    if (exit) state = {{"terminated", {{"exitCode", *exit}}}};
    Json patch = {{"spec", {{"nodeName", "pjemu-node"}}}};
    REQUIRE(client->Patch(api::Pods(), "default", pod, api::PatchType::kMerge, patch).ok());
    patch = {{"status",
              {{"phase", phase},
               {"containerStatuses",
                Json::array({{{"name", "pytorch"}, {"restartCount", 0}, {"state", state}}})}}}};
    REQUIRE(client
                ->Patch(api::Pods(), "default", pod, api::PatchType::kMerge, patch,
                        api::Subresource::kStatus)
                .ok());
    loop.RunUntilIdle();
  }
  std::vector<std::string> EventReasons(const std::string& job) {
    std::vector<std::string> out;
    const Json list = *client->List(api::Events(), "default");
    for (const Json& ev : list["items"]) {
      if (ev["involvedObject"]["name"] == job) out.push_back(ev["reason"]);
    }
    return out;
  }
};

Json T9kJob(const std::string& name, const std::string& policy) {
  Json container = {{"name", "pytorch"}, {"image", "busybox"}, {"command", {"sh", "-c", "train"}}};
  return {{"apiVersion", "batch.tensorstack.dev/v1beta1"},
          {"kind", "PyTorchTrainingJob"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"replicaSpecs",
             Json::array({{{"type", "worker"},
                           {"replicas", 2},
                           {"restartPolicy", policy},
                           {"template", {{"spec", {{"containers", {container}}}}}}}})}}}};
}

TEST_CASE("E1: a PyTorchTrainingJob makes its pods and Service, runs and succeeds") {
  Cluster c;
  REQUIRE(c.client->Create(api::PyTorchTrainingJobs(), "default", T9kJob("mnist", "ExitCode")).ok());
  c.loop.RunUntilIdle();
  Json job = c.Get(api::PyTorchTrainingJobs(), "mnist");
  const std::string prefix = "mnist-" + api::t9k::NameSuffix(job) + "-worker-";
  CHECK(c.Names(api::Pods(), "tensorstack.dev/owner-name=mnist") ==
        std::vector<std::string>{prefix + "0", prefix + "1"});
  CHECK(c.Names(api::Services(), "tensorstack.dev/owner-name=mnist") ==
        std::vector<std::string>{prefix + "0"});
  CHECK(job["status"]["phase"] == "Pending");
  c.SetPod(prefix + "0", "Running");
  c.SetPod(prefix + "1", "Running");
  CHECK(c.Get(api::PyTorchTrainingJobs(), "mnist")["status"]["phase"] == "Running");
  c.SetPod(prefix + "1", "Succeeded", 0);
  c.SetPod(prefix + "0", "Succeeded", 0);
  job = c.Get(api::PyTorchTrainingJobs(), "mnist");
  CHECK(job["status"]["phase"] == "Succeeded");
  CHECK(job["status"]["aggregate"]["succeeded"] == 2);
  CHECK(c.EventReasons("mnist") ==
        std::vector<std::string>{"Created", "Start", "NewReplica", "NewReplica", "Succeeded"});
}

TEST_CASE("E2: a replica killed under ExitCode is made again under its name") {
  Cluster c;
  REQUIRE(c.client->Create(api::PyTorchTrainingJobs(), "default", T9kJob("mnist", "ExitCode")).ok());
  c.loop.RunUntilIdle();
  const std::string pod =
      "mnist-" + api::t9k::NameSuffix(c.Get(api::PyTorchTrainingJobs(), "mnist")) + "-worker-1";
  const std::string uid = c.Get(api::Pods(), pod)["metadata"]["uid"];
  c.SetPod(pod, "Failed", 137);
  Json again = c.Get(api::Pods(), pod);
  REQUIRE(again.is_object());
  CHECK(again["metadata"]["uid"] != uid);
  Json job = c.Get(api::PyTorchTrainingJobs(), "mnist");
  CHECK(job["status"]["backoffCount"] == 1);
  CHECK(job["status"]["tasks"][0]["restartCount"] == 1);
}

TEST_CASE("E3: a PyTorchJob of the same name is its own controller's, not T9k's") {
  Cluster c;
  Json container = {{"name", "pytorch"}, {"image", "busybox"}};
  Json kubeflow = {{"apiVersion", "kubeflow.org/v1"},
                   {"kind", "PyTorchJob"},
                   {"metadata", {{"name", "mnist"}}},
                   {"spec",
                    {{"pytorchReplicaSpecs",
                      {{"Master",
                        {{"replicas", 1},
                         {"template", {{"spec", {{"containers", {container}}}}}}}}}}}}};
  REQUIRE(c.client->Create(api::PyTorchJobs(), "default", kubeflow).ok());
  REQUIRE(c.client->Create(api::PyTorchTrainingJobs(), "default", T9kJob("mnist", "Never")).ok());
  c.loop.RunUntilIdle();
  CHECK(c.Names(api::Pods(), "training.kubeflow.org/job-name=mnist") ==
        std::vector<std::string>{"mnist-master-0"});
  CHECK(c.Names(api::Pods(), "tensorstack.dev/owner-name=mnist").size() == 2);
  c.SetPod("mnist-master-0", "Succeeded", 0);
  CHECK(c.Get(api::PyTorchTrainingJobs(), "mnist")["status"]["phase"] == "Pending");
}

}  // namespace
}  // namespace pjemu::t9kjob
