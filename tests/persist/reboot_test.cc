// Node reboot: a new kubelet on a store whose pods were running under a kubelet that died. Pure
// RecoverAfterReboot cases, then the real thing: a Kubelet is stopped (its processes SIGKILLed,
// the pod status left as it was) and a fresh Kubelet takes over the same store.
#include <catch2/catch.hpp>

#include "emulator/kubelet/pod_reboot.h"
#include "tests/kubelet/node_fixture.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

Json StoredPod(const std::string& policy, Json statuses) {
  return {{"metadata", {{"name", "p"}, {"uid", "u1"}}},
          {"spec", {{"restartPolicy", policy}, {"containers", {{{"name", "a"}}, {{"name", "b"}}}}}},
          {"status", {{"phase", "Running"}, {"containerStatuses", statuses}}}};
}

Json Running(const std::string& name, int restarts) {
  return {{"name", name},
          {"restartCount", restarts},
          {"state", {{"running", {{"startedAt", "2024-01-01T00:00:00Z"}}}}}};
}

Json Finished(const std::string& name, int exit_code) {
  return {{"name", name},
          {"restartCount", 0},
          {"state",
           {{"terminated",
             {{"exitCode", exit_code},
              {"reason", exit_code == 0 ? "Completed" : "Error"},
              {"startedAt", "2024-01-01T00:00:00Z"},
              {"finishedAt", "2024-01-01T00:01:00Z"}}}}}};
}

PodState Fresh() {
  PodState s;
  s.main.resize(2);
  s.main[0].name = "a";
  s.main[1].name = "b";
  return s;
}

TEST_CASE("reboot: a running container under OnFailure restarts with ContainerStatusUnknown") {
  PodState s = Fresh();
  RecoverAfterReboot(StoredPod("OnFailure", {Running("a", 2), Finished("b", 0)}), s, Time{});
  CHECK(s.main[0].phase == Phase::kWaiting);
  CHECK(s.main[0].restart_count == 3);
  CHECK(s.main[0].last_state["terminated"]["reason"] == "ContainerStatusUnknown");
  CHECK(s.main[0].last_state["terminated"]["exitCode"] == 137);
  CHECK(s.main[0].last_state["terminated"]["message"] == kRebootMessage);
  // The finished one is not run again under OnFailure.
  CHECK(s.main[1].phase == Phase::kTerminated);
  CHECK(s.main[1].exit_code == 0);
  CHECK(s.main[1].reason == "Completed");
  CHECK(ComputePhase(s, "OnFailure") == "Running");
}

TEST_CASE("reboot: under Never the running container stays terminated and the pod Failed") {
  PodState s = Fresh();
  RecoverAfterReboot(StoredPod("Never", {Running("a", 0), Finished("b", 0)}), s, Time{});
  CHECK(s.main[0].phase == Phase::kTerminated);
  CHECK(s.main[0].exit_code == 137);
  CHECK(s.main[0].reason == "ContainerStatusUnknown");
  CHECK(s.main[0].restart_count == 1);
  CHECK(ComputePhase(s, "Never") == "Failed");
}

TEST_CASE("reboot: Always runs a completed container again, a pod that never ran is untouched") {
  PodState s = Fresh();
  RecoverAfterReboot(StoredPod("Always", {Finished("a", 0), Finished("b", 1)}), s, Time{});
  CHECK(s.main[0].phase == Phase::kWaiting);
  CHECK(s.main[0].restart_count == 1);
  CHECK(s.main[0].last_state["terminated"]["reason"] == "Completed");
  CHECK(s.main[1].phase == Phase::kWaiting);
  PodState fresh = Fresh();
  Json pending = StoredPod("Always", Json::array());
  pending["status"] = {{"phase", "Pending"}};
  RecoverAfterReboot(pending, fresh, Time{});
  CHECK(fresh.main[0].phase == Phase::kWaiting);
  CHECK(fresh.main[0].restart_count == 0);
  CHECK(fresh.main[0].last_state.empty());
}

TEST_CASE("reboot: a new kubelet reports the dead container and restarts it per policy") {
  NodeFixture node({}, "persist-reboot");
  node.Create(TestPod("on-failure", {TestContainer("main", {"--print", "hello", "--sleep-ms",
                                                            "60000"})},
                      "OnFailure"));
  node.Create(TestPod("never", {TestContainer("main", {"--sleep-ms", "60000"})}, "Never"));
  REQUIRE(node.WaitPhase("on-failure", "Running"));
  REQUIRE(node.WaitPhase("never", "Running"));
  REQUIRE(node.Wait([&] { return node.Status("on-failure", "main").value("ready", false); }));
  // The node goes away: processes killed, status left as the old kubelet wrote it.
  node.kubelet->Stop();
  REQUIRE(node.loop.RunUntil([&] { return node.runner.running() == 0; }, 10s));
  CHECK(node.Phase("on-failure") == "Running");

  KubeletOptions opts;
  opts.root_dir = node.root;
  opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
  opts.gpus = 0;
  opts.cpu = "8";
  opts.memory = "16Gi";
  opts.sandbox = KubeletOptions::Sandbox::kOff;  // as NodeFixture's first kubelet
  node.kubelet = std::make_unique<Kubelet>(*node.client, node.loop, node.runner, opts);
  REQUIRE(node.kubelet->Start().ok());

  REQUIRE(node.WaitPhase("never", "Failed"));
  Json never = node.Status("never", "main");
  CHECK(never["state"]["terminated"]["reason"] == "ContainerStatusUnknown");
  CHECK(never["state"]["terminated"]["exitCode"] == 137);

  REQUIRE(node.Wait([&] {
    Json s = node.Status("on-failure", "main");
    return s.value("restartCount", 0) == 1 && s.value("ready", false);
  }));
  Json again = node.Status("on-failure", "main");
  CHECK(again["lastState"]["terminated"]["reason"] == "ContainerStatusUnknown");
  CHECK(again["lastState"]["terminated"]["exitCode"] == 137);
  CHECK(node.Phase("on-failure") == "Running");
  CHECK(node.runner.running() == 1);
}

}  // namespace
}  // namespace pjemu::kubelet
