// Given the SimulatedProcessRunner and a FakeClock, the kubelet's CrashLoopBackOff timing
// should be exactly the real kubelet's (immediate, then 10 s, 20 s, ...), with no sleeping.
#include <catch2/catch.hpp>
#include <unistd.h>

#include "emulator/api/pod_status.h"
#include "emulator/client/local_client.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/simulated_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::kubelet {
namespace {

TEST_CASE("virtual time: CrashLoopBackOff restarts after 0 s, 10 s, 20 s, 40 s",
          "[kubelet][virtual]") {
  FakeClock clock;
  EventLoop loop(clock);
  store::Store store(clock);
  auto client = client::MakeLocalClient(store);
  process::SimulatedProcessRunner runner(loop, [](const process::ProcessSpec&) {
    process::SimulatedOutcome o;
    o.runtime = 1s;
    o.exit_code = 1;
    o.output = {"crashing"};
    return o;
  });
  scheduler::Scheduler scheduler(*client, loop);
  KubeletOptions opts;
  opts.root_dir = std::string(PJEMU_BINARY_DIR) + "/test-kubelet-virtual-" + std::to_string(getpid());
  opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
  opts.gpus = 0;
  opts.cpu = "4";
  opts.memory = "8Gi";
  Kubelet kubelet(*client, loop, runner, opts);
  REQUIRE(kubelet.Start().ok());
  REQUIRE(scheduler.Start().ok());
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
  CHECK(runner.started().size() == 5);
  kubelet.Stop();
  scheduler.Stop();
}


// The wait-for-service builtin is woken by the master's Ready status in the store, not by its
// next try: with tries an hour apart, the worker's init container ends at the instant the
// master becomes Ready.
TEST_CASE("virtual time: the operator's init container ends when the master becomes Ready",
          "[kubelet][virtual][network]") {
  FakeClock clock;
  EventLoop loop(clock);
  store::Store store(clock);
  auto client = client::MakeLocalClient(store);
  process::SimulatedProcessRunner runner(loop, [](const process::ProcessSpec&) {
    process::SimulatedOutcome o;
    o.runtime = 60s;
    return o;
  });
  scheduler::Scheduler scheduler(*client, loop);
  KubeletOptions opts;
  opts.root_dir =
      std::string(PJEMU_BINARY_DIR) + "/test-kubelet-virtual-wake-" + std::to_string(getpid());
  opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
  opts.gpus = 0;
  opts.cpu = "4";
  opts.memory = "8Gi";
  opts.service_poll_interval = 1h;
  Kubelet kubelet(*client, loop, runner, opts);
  REQUIRE(kubelet.Start().ok());
  REQUIRE(scheduler.Start().ok());
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
  REQUIRE(client->Create(api::Pods(), "default", pod("master")).ok());
  loop.RunFor(1ms);  // the next try would be an hour after the last
  Json master = *client->Get(api::Pods(), "default", "master");
  REQUIRE(api::PodReady(master));
  REQUIRE(init_state().contains("terminated"));
  CHECK(init_state()["terminated"]["exitCode"] == 0);
  CHECK((*client->Get(api::Pods(), "default", "worker"))["status"]["phase"] == "Running");
  kubelet.Stop();
  scheduler.Stop();
}

}  // namespace
}  // namespace pjemu::kubelet
