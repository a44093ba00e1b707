// Given a Store, a LocalClient and the Job Controller on a virtual-time EventLoop, a Job created
// as `kubectl create job` sends it should be defaulted by admission and run to Complete through
// the shared controller machinery (the kubelet simulated by status patches).
#include <catch2/catch.hpp>

#include "emulator/api/batchjob.h"
#include "emulator/api/resources.h"
#include "emulator/api/workload.h"
#include "emulator/batchjob/batchjob.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/store/store.h"

namespace pjemu::batchjob {
namespace {

struct Cluster {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  controller::Controller jobs{*client, loop, controller::SpecOf(Descriptor(), *client, clock)};

  Cluster() {
    REQUIRE(jobs.Start().ok());
    loop.RunUntilIdle();
  }
  ~Cluster() { jobs.Stop(); }
  std::vector<Json> Pods(const std::string& job) {
    api::ListOptions o;
    o.label_selector = std::string(api::batchjob::kJobNameLabel) + "=" + job;
    return (*client->List(api::Pods(), "default", o))["items"];
  }
  void SetPod(const std::string& pod, const std::string& phase, int exit) {
    Json patch = {{"status",
                   {{"phase", phase},
                    {"containerStatuses",
                     Json::array({{{"name", "pi"},
                                   {"restartCount", 0},
                                   {"state", {{"terminated", {{"exitCode", exit},
                                                              {"finishedAt", FormatTime(clock.Now())}}}}}}})}}}};
    REQUIRE(client->Patch(api::Pods(), "default", pod, api::PatchType::kMerge, patch,
                          api::Subresource::kStatus).ok());
    loop.RunUntilIdle();
  }
  std::vector<std::string> Events(const std::string& job) {
    std::vector<std::string> out;
    const Json listed = *client->List(api::Events(), "default");
    for (const Json& ev : listed["items"]) {
      if (ev["involvedObject"]["name"] == job) out.push_back(ev["reason"]);
    }
    return out;
  }
};

Json KubectlCreateJob(int completions) {
  return Json::parse(R"({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
    "spec": {"completions": )" + std::to_string(completions) + R"(, "completionMode": "Indexed",
      "template": {"metadata": {}, "spec": {"restartPolicy": "Never",
      "containers": [{"name": "pi", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}}})");
}

TEST_CASE("J12: a stored Job is defaulted, makes `<job>-<index>-<random>` pods and completes") {
  Cluster c;
  auto created = c.client->Create(api::Jobs(), "default", KubectlCreateJob(2));
  REQUIRE(created.ok());
  CHECK((*created)["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] ==
        (*created)["metadata"]["uid"]);
  c.loop.RunUntilIdle();
  std::vector<Json> pods = c.Pods("pi");
  REQUIRE(pods.size() == 1);  // parallelism 1
  const std::string first = pods[0]["metadata"]["name"];
  CHECK(first.rfind("pi-0-", 0) == 0);
  CHECK(first.size() == 10);
  CHECK(pods[0]["spec"]["hostname"] == "pi-0");
  c.SetPod(first, "Succeeded", 0);
  pods = c.Pods("pi");
  REQUIRE(pods.size() == 2);
  const std::string second = pods[0]["metadata"]["name"] == first ? pods[1]["metadata"]["name"]
                                                                   : pods[0]["metadata"]["name"];
  CHECK(second.rfind("pi-1-", 0) == 0);
  c.SetPod(second, "Succeeded", 0);
  const Json job = *c.client->Get(api::Jobs(), "default", "pi");
  CHECK(job["status"]["succeeded"] == 2);
  CHECK(job["status"]["completedIndexes"] == "0,1");
  CHECK(api::StateOf(job).state == "Complete");
  CHECK(c.Events("pi") ==
        std::vector<std::string>{"SuccessfulCreate", "SuccessfulCreate", "Completed"});
}

TEST_CASE("J13: a Job refused at admission names the field") {
  Cluster c;
  Json job = KubectlCreateJob(1);
  job["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  auto r = c.client->Create(api::Jobs(), "default", job);
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("Job.batch \"pi\" is invalid: spec.template.spec.restartPolicy: "
                                  "Unsupported value: \"Always\"") != std::string::npos);
}

}  // namespace
}  // namespace pjemu::batchjob
