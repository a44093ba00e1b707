// Given container states, the pod status should follow the kubelet's getPhase and conditions.
#include "emulator/kubelet/pod_state.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

ContainerState C(const std::string& name, Phase phase, int exit_code = 0, bool restarted = false) {
  ContainerState c;
  c.name = name;
  c.phase = phase;
  c.exit_code = exit_code;
  if (phase == Phase::kWaiting && restarted) {
    c.reason = "CrashLoopBackOff";
    c.last_state = {{"terminated", {{"exitCode", 1}}}};
  }
  if (phase == Phase::kTerminated) c.reason = exit_code ? "Error" : "Completed";
  return c;
}

TEST_CASE("pod phase follows getPhase", "[kubelet]") {
  struct Row {
    std::vector<ContainerState> init, main;
    std::string policy, want;
  };
  std::vector<Row> rows = {
      {{}, {C("a", Phase::kWaiting)}, "Never", "Pending"},
      {{}, {C("a", Phase::kRunning)}, "Never", "Running"},
      {{}, {C("a", Phase::kRunning), C("b", Phase::kWaiting)}, "Never", "Pending"},
      {{}, {C("a", Phase::kTerminated, 0)}, "Never", "Succeeded"},
      {{}, {C("a", Phase::kTerminated, 0)}, "OnFailure", "Succeeded"},
      {{}, {C("a", Phase::kTerminated, 0)}, "Always", "Running"},
      {{}, {C("a", Phase::kTerminated, 1)}, "Never", "Failed"},
      {{}, {C("a", Phase::kTerminated, 1), C("b", Phase::kRunning)}, "Never", "Running"},
      {{}, {C("a", Phase::kWaiting, 0, true)}, "OnFailure", "Running"},
      {{C("i", Phase::kRunning)}, {C("a", Phase::kWaiting)}, "Never", "Pending"},
      {{C("i", Phase::kTerminated, 1)}, {C("a", Phase::kWaiting)}, "Never", "Failed"},
      {{C("i", Phase::kTerminated, 1)}, {C("a", Phase::kWaiting)}, "OnFailure", "Pending"},
      {{C("i", Phase::kTerminated, 0)}, {C("a", Phase::kRunning)}, "Never", "Running"},
  };
  for (std::size_t n = 0; n < rows.size(); ++n) {
    CAPTURE(n);
    PodState s;
    s.init = rows[n].init;
    s.main = rows[n].main;
    CHECK(ComputePhase(s, rows[n].policy) == rows[n].want);
  }
}

TEST_CASE("restart policy decides which exits restart", "[kubelet]") {
  CHECK(ShouldRestart("Always", 0));
  CHECK(ShouldRestart("OnFailure", 1));
  CHECK_FALSE(ShouldRestart("OnFailure", 0));
  CHECK_FALSE(ShouldRestart("Never", 137));
}

TEST_CASE("pod status carries conditions, IPs and container statuses", "[kubelet]") {
  Time t0 = Time(std::chrono::seconds(FakeClock::kEpochSeconds));
  Json pod = {{"spec",
               {{"restartPolicy", "Never"},
                {"containers", {{{"name", "b"}}, {{"name", "a"}}}},
                {"initContainers", {{{"name", "init"}}}}}},
              {"status",
               {{"conditions",
                 {{{"type", "PodScheduled"},
                   {"status", "True"},
                   {"lastTransitionTime", "2023-12-31T00:00:00Z"}}}}}}};
  PodState s;
  s.pod_ip = "127.42.0.2";
  s.host_ip = "127.0.0.1";
  s.start_time = t0;
  s.init = {C("init", Phase::kRunning)};
  s.init[0].started_at = t0;
  s.main = {C("b", Phase::kWaiting), C("a", Phase::kWaiting)};
  Json st = ComputePodStatus(pod, s, t0 + 1s);
  CHECK(st["phase"] == "Pending");
  CHECK(st["podIP"] == "127.42.0.2");
  CHECK(st["hostIP"] == "127.0.0.1");
  CHECK(st["startTime"] == "2024-01-01T00:00:00Z");
  CHECK(st["qosClass"] == "BestEffort");
  {  // the class a status has already is kept, as the kubelet's GetPodQOS reads it first
    Json classed = pod;
    classed["status"]["qosClass"] = "Burstable";
    CHECK(ComputePodStatus(classed, s, t0 + 1s)["qosClass"] == "Burstable");
  }
  REQUIRE(st["conditions"].size() == 4);
  CHECK(st["conditions"][0]["type"] == "Initialized");
  CHECK(st["conditions"][0]["status"] == "False");
  CHECK(st["conditions"][0]["message"] == "containers with incomplete status: [init]");
  CHECK(st["conditions"][1]["type"] == "Ready");
  CHECK(st["conditions"][1]["message"] == "containers with unready status: [b a]");
  CHECK(st["conditions"][3]["type"] == "PodScheduled");
  CHECK(st["conditions"][3]["lastTransitionTime"] == "2023-12-31T00:00:00Z");
  // containerStatuses are sorted by name; each has the fields the Python client requires.
  CHECK(st["containerStatuses"][0]["name"] == "a");
  CHECK(st["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating");
  for (const char* f : {"image", "imageID", "ready", "restartCount", "lastState", "started"}) {
    CHECK(st["containerStatuses"][0].contains(f));
  }
  CHECK(st["initContainerStatuses"][0]["state"]["running"]["startedAt"] == "2024-01-01T00:00:00Z");

  // All done: Succeeded, Ready False with PodCompleted, transition times kept when unchanged.
  pod["status"] = st;
  s.init[0] = C("init", Phase::kTerminated, 0);
  s.main = {C("b", Phase::kTerminated, 0), C("a", Phase::kTerminated, 0)};
  s.main[0].finished_at = t0 + 5s;
  Json done = ComputePodStatus(pod, s, t0 + 9s);
  CHECK(done["phase"] == "Succeeded");
  CHECK(done["conditions"][1]["reason"] == "PodCompleted");
  CHECK(done["conditions"][1]["lastTransitionTime"] == "2024-01-01T00:00:01Z");
  CHECK(done["conditions"][0]["status"] == "True");
  CHECK(done["conditions"][0]["lastTransitionTime"] == "2024-01-01T00:00:09Z");
  CHECK(done["containerStatuses"][1]["state"]["terminated"]["reason"] == "Completed");
  CHECK(done["containerStatuses"][1]["state"]["terminated"]["finishedAt"] ==
        "2024-01-01T00:00:05Z");
}

TEST_CASE("signals show as exit code 128+n and OOMKilled keeps 137", "[kubelet]") {
  ContainerState c = C("a", Phase::kTerminated, 137);
  c.signal = 9;
  c.reason = "OOMKilled";
  Json t = TerminatedJson(c);
  CHECK(t["exitCode"] == 137);
  CHECK(t["signal"] == 9);
  CHECK(t["reason"] == "OOMKilled");
}

}  // namespace
}  // namespace pjemu::kubelet
