// Given the SimulatedProcessRunner and a FakeClock, the kubelet's CrashLoopBackOff timing
// should be exactly the real kubelet's (immediate, then 10 s, 20 s, ...), with no sleeping.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/client/local_client.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/simulated_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::kubelet {
namespace {

// One node on a FakeClock: a store, the scheduler and a kubelet over the simulated runner, whose
// every process ends as `outcome` says. Started on construction.
struct VirtualNode {
  VirtualNode(const std::string& name, process::SimulatedOutcome outcome,
              Duration service_poll_interval = 1s)
      : client(client::MakeLocalClient(store)),
        runner(loop, [outcome](const process::ProcessSpec&) { return outcome; }),
        scheduler(*client, loop),
        kubelet(*client, loop, runner, Options(name, service_poll_interval)) {
    REQUIRE(kubelet.Start().ok());
    REQUIRE(scheduler.Start().ok());
  }
  ~VirtualNode() {
    kubelet.Stop();
    scheduler.Stop();
  }
  static KubeletOptions Options(const std::string& name, Duration service_poll_interval) {
    KubeletOptions opts;
    opts.root_dir = std::string(PJEMU_BINARY_DIR) + "/test-kubelet-virtual-" + name + "-" +
                    std::to_string(getpid());
    opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
    opts.gpus = 0;
    opts.cpu = "4";
    opts.memory = "8Gi";
    opts.service_poll_interval = service_poll_interval;
    return opts;
  }

  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client;
  process::SimulatedProcessRunner runner;
  scheduler::Scheduler scheduler;
  Kubelet kubelet;
};

TEST_CASE("virtual time: CrashLoopBackOff restarts after 0 s, 10 s, 20 s, 40 s",
          "[kubelet][virtual]") {
  process::SimulatedOutcome crash;
  crash.runtime = 1s;
  crash.exit_code = 1;
  crash.output = {"crashing"};
  VirtualNode node("backoff", crash);
  FakeClock& clock = node.clock;
  EventLoop& loop = node.loop;
  client::Client* client = node.client.get();
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"restartPolicy", "OnFailure"},
                {"containers", {{{"name", "main"}, {"image", "busybox"}, {"command", {"x"}}}}}}}};
  REQUIRE(client->Create(api::Pods(), "default", pod).ok());
  auto status = [&] {
    return (*client->Get(api::Pods(), "default", "p"))["status"]["containerStatuses"][0];
  };
  const Time t0 = clock.Now();
  auto at = [&](Duration d) { loop.RunFor(t0 + d - clock.Now()); };

  at(500ms);
  CHECK(status()["state"].contains("running"));
  at(1500ms);  // first exit at 1 s: restarted at once
  CHECK(status()["restartCount"] == 1);
  CHECK(status()["state"].contains("running"));
  at(11500ms);  // second exit at 2 s: back-off 10 s
  CHECK(status()["restartCount"] == 1);
  CHECK(status()["state"]["waiting"]["reason"] == "CrashLoopBackOff");
  CHECK(status()["state"]["waiting"]["message"].get<std::string>().rfind(
            "back-off 10s restarting failed container=main pod=p_default(", 0) == 0);
  CHECK(status()["lastState"]["terminated"]["exitCode"] == 1);
  at(12500ms);  // restarted at 12 s
  CHECK(status()["restartCount"] == 2);
  at(32500ms);  // exit at 13 s, back-off 20 s: still waiting at 32.5 s
  CHECK(status()["restartCount"] == 2);
  at(33500ms);
  CHECK(status()["restartCount"] == 3);
  at(73500ms);  // exit at 34 s, back-off 40 s
  CHECK(status()["restartCount"] == 3);
  at(74500ms);
  CHECK(status()["restartCount"] == 4);
  CHECK((*client->Get(api::Pods(), "default", "p"))["status"]["phase"] == "Running");
  CHECK(node.runner.started() == 5);
}


// The wait-for-service builtin is woken by the master's Ready status in the store, not by its
// next try: with tries an hour apart, the worker's init container ends at the instant the
// master becomes Ready.
TEST_CASE("virtual time: the operator's init container ends when the master becomes Ready",
          "[kubelet][virtual][network]") {
  process::SimulatedOutcome long_run;
  long_run.runtime = 60s;
  VirtualNode node("wake", long_run, /*service_poll_interval=*/1h);
  EventLoop& loop = node.loop;
  client::Client* client = node.client.get();
  auto pod = [](const std::string& name) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", {{"job", "j"}, {"role", name}}}}},
                {"spec",
                 {{"restartPolicy", "OnFailure"},
                  {"containers", {{{"name", "main"}, {"image", "busybox"}, {"command", {"x"}}}}}}}};
  };
  Json worker = pod("worker");
  worker["spec"]["initContainers"] = {
      {{"name", "init-pytorch"},
       {"image", "alpine:3.10"},
       {"command",
        {"sh", "-c",
         "err=1;for i in $(seq 100); do if nslookup master-svc; then err=0 && break; fi;echo "
         "waiting for master; sleep 2; done; exit $err"}}}};
  Json service = {{"apiVersion", "v1"},
                  {"kind", "Service"},
                  {"metadata", {{"name", "master-svc"}}},
                  {"spec",
                   {{"clusterIP", "None"},
                    {"selector", {{"job", "j"}, {"role", "master"}}},
                    {"ports", {{{"port", 23456}}}}}}};
  REQUIRE(client->Create(api::Services(), "default", service).ok());
  REQUIRE(client->Create(api::Pods(), "default", worker).ok());
  auto init_state = [&] {
    return (*client->Get(api::Pods(), "default", "worker"))["status"]["initContainerStatuses"][0]
                                                            ["state"];
  };
  loop.RunFor(5s);
  REQUIRE(init_state().contains("running"));
  // Its image is present as any other container's: Pulled, then Created and Started.
  std::vector<std::string> init_events;
  auto events = client->List(api::Events(), "default");
  REQUIRE(events.ok());
  for (const Json& e : (*events)["items"]) {
    const std::string message = e.value("message", "");
    if (api::FieldAt(e, {"involvedObject", "name"}) == "worker" &&
        message.find("alpine:3.10") != std::string::npos) {
      init_events.push_back(e.value("reason", "") + ": " + message);
    }
  }
  REQUIRE(init_events.size() == 1);
  CHECK(init_events[0].rfind("Pulled: Container image \"alpine:3.10\" already present on machine "
                             "(image map ",
                             0) == 0);
  CHECK(init_events[0].find(": the kubelet's built-in wait for the service)") != std::string::npos);
  REQUIRE(client->Create(api::Pods(), "default", pod("master")).ok());
  loop.RunFor(1ms);  // the next try would be an hour after the last
  Json master = *client->Get(api::Pods(), "default", "master");
  REQUIRE(api::PodReady(master));
  REQUIRE(init_state().contains("terminated"));
  CHECK(init_state()["terminated"]["exitCode"] == 0);
  CHECK((*client->Get(api::Pods(), "default", "worker"))["status"]["phase"] == "Running");
}

}  // namespace
}  // namespace pjemu::kubelet
