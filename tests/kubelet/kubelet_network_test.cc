// Given a PyTorchJob's pods and Services, name resolution should behave as cluster DNS would:
// the operator's init container waits until the master is Ready, and a pod (of any owner) whose
// MASTER_ADDR Service does not exist yet is held in ContainerCreating rather than started with
// an unknown name.
#include <catch2/catch.hpp>

#include "node_fixture.h"

namespace pjemu::kubelet {
namespace {

Json Service(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"clusterIP", "None"},
            {"selector", {{"job", name}}},
            {"ports", {{{"name", "pytorchjob-port"}, {"port", 23456}}}}}}};
}

Json JobPod(const std::string& name, const std::string& label, Json container) {
  Json pod = TestPod(name, {container});
  pod["metadata"]["labels"] = {{"job", label}};
  pod["metadata"]["ownerReferences"] = {{{"apiVersion", "kubeflow.org/v1"},
                                         {"kind", "PyTorchJob"},
                                         {"name", "job"},
                                         {"uid", "job-uid"},
                                         {"controller", true}}};
  return pod;
}

Json MasterEnvContainer(std::vector<std::string> flags) {
  Json c = TestContainer("pytorch", std::move(flags));
  c["env"] = {{{"name", "MASTER_ADDR"}, {"value", "job-master-0"}},
              {{"name", "MASTER_PORT"}, {"value", "23456"}}};
  return c;
}

TEST_CASE("a job pod is held until the Service in MASTER_ADDR exists", "[kubelet][network]") {
  NodeFixture f;
  f.Create(
      JobPod("job-master-0", "job-master-0",
             MasterEnvContainer({"--print-env", "MASTER_ADDR", "--print-env", "MASTER_PORT"})));
  f.Wait([] { return false; }, 500ms);
  Json c = f.Status("job-master-0", "pytorch");
  REQUIRE_FALSE(c.is_null());
  CHECK(c["state"]["waiting"]["reason"] == "ContainerCreating");
  REQUIRE(f.client->Create(api::Services(), "default", Service("job-master-0")).ok());
  REQUIRE(f.WaitPhase("job-master-0", "Succeeded"));
  std::string log = ReadFile(f.kubelet->Find({"default", "job-master-0", "", false})->path);
  std::string ip = f.Get("job-master-0")["status"]["podIP"];
  CHECK(log.find("MASTER_ADDR=" + ip + "\n") != std::string::npos);
  CHECK(log.find("MASTER_PORT=23456\n") == std::string::npos);
}

TEST_CASE("the operator's init container waits for a Ready master", "[kubelet][network]") {
  NodeFixture f;
  REQUIRE(f.client->Create(api::Services(), "default", Service("job-master-0")).ok());
  Json worker =
      JobPod("job-worker-0", "job-worker-0", MasterEnvContainer({"--print-env", "MASTER_ADDR"}));
  worker["spec"]["initContainers"] = {
      {{"name", "init-pytorch"},
       {"image", "alpine:3.10"},
       {"command",
        {"sh", "-c",
         "err=1;for i in $(seq 100); do if nslookup job-master-0; then err=0 && break; fi;echo "
         "waiting for master; sleep 2; done; exit $err"}}}};
  f.Create(worker);
  f.Wait([] { return false; }, 500ms);
  CHECK(f.Phase("job-worker-0") == "Pending");
  CHECK(f.Status("job-worker-0", "init-pytorch", true)["state"].contains("running"));
  f.Create(JobPod("job-master-0", "job-master-0", MasterEnvContainer({"--sleep-ms", "1000"})));
  REQUIRE(f.WaitPhase("job-worker-0", "Succeeded"));
  auto init_log = f.kubelet->Find({"default", "job-worker-0", "init-pytorch", false});
  REQUIRE(init_log.ok());
  std::string text = ReadFile(init_log->path);
  std::string ip = f.Get("job-master-0")["status"]["podIP"];
  CHECK(text.find(" stdout F waiting for master\n") != std::string::npos);
  CHECK(text.find(" stdout F Address: " + ip + "\n") != std::string::npos);
  CHECK(f.Status("job-worker-0", "init-pytorch", true)["state"]["terminated"]["exitCode"] == 0);
  std::string main = ReadFile(f.kubelet->Find({"default", "job-worker-0", "", false})->path);
  CHECK(main.find("MASTER_ADDR=" + ip + "\n") != std::string::npos);
}

TEST_CASE("any pod whose MASTER_ADDR names a Service is held until it resolves, whoever owns it",
          "[kubelet][network]") {
  NodeFixture f;
  Json other_owner =
      JobPod("trainer-0", "trainer-0", MasterEnvContainer({"--print-env", "MASTER_ADDR"}));
  other_owner["metadata"]["ownerReferences"][0]["apiVersion"] = "jobset.x-k8s.io/v1alpha2";
  other_owner["metadata"]["ownerReferences"][0]["kind"] = "JobSet";
  Json no_owner = other_owner;
  no_owner["metadata"]["name"] = "trainer-1";
  no_owner["metadata"]["labels"]["job"] = "trainer-1";
  no_owner["metadata"].erase("ownerReferences");
  Json on_loopback = no_owner;  // localhost is the pod's own, never a Service: not held
  on_loopback["metadata"]["name"] = "solo";
  on_loopback["spec"]["containers"][0]["env"][0]["value"] = "localhost";
  for (const Json& pod : {other_owner, no_owner, on_loopback}) f.Create(pod);
  REQUIRE(f.WaitPhase("solo", "Succeeded"));
  std::string solo = ReadFile(f.kubelet->Find({"default", "solo", "", false})->path);
  CHECK(solo.find("MASTER_ADDR=localhost\n") != std::string::npos);
  for (const char* held : {"trainer-0", "trainer-1"}) {
    INFO(held);
    CHECK(f.Status(held, "pytorch")["state"]["waiting"]["reason"] == "ContainerCreating");
  }
  // Both pods' MASTER_ADDR, job-master-0, resolves once a Service of that name selects a pod.
  Json service = Service("job-master-0");
  service["spec"]["selector"] = {{"job", "trainer-0"}};
  REQUIRE(f.client->Create(api::Services(), "default", service).ok());
  REQUIRE(f.WaitPhase("trainer-0", "Succeeded"));
  REQUIRE(f.WaitPhase("trainer-1", "Succeeded"));
  std::string ip = f.Get("trainer-0")["status"]["podIP"];
  for (const char* name : {"trainer-0", "trainer-1"}) {
    std::string log = ReadFile(f.kubelet->Find({"default", name, "", false})->path);
    CHECK(log.find("MASTER_ADDR=" + ip + "\n") != std::string::npos);
  }
}

}  // namespace
}  // namespace pjemu::kubelet
