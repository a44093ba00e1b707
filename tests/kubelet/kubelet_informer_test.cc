// Given an API that ends the kubelet's pod watch and then refuses to list or watch for a while,
// the kubelet should not go deaf: once the API is back it catches up with the pods bound to it
// meanwhile, and a pod deleted while its stream was broken is killed. Virtual time.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "emulator/client/local_client.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/simulated_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"
#include "tests/client/flaky_client.h"

namespace pjemu::kubelet {
namespace {

Json SimplePod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers", {{{"name", "main"}, {"image", "busybox"}, {"command", {"x"}}}}}}}};
}

// The kubelet talks through a FlakyClient; the scheduler and the test through the store's own.
struct FlakyNode {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> local = client::MakeLocalClient(store);
  testing::FlakyClient flaky{*local, clock};
  process::SimulatedProcessRunner runner{loop, [](const process::ProcessSpec&) {
                                           process::SimulatedOutcome o;
                                           o.runtime = 10s;
                                           return o;
                                         }};
  scheduler::Scheduler scheduler{*local, loop};
  std::unique_ptr<Kubelet> kubelet;

  FlakyNode() {
    KubeletOptions opts;
    opts.root_dir =
        std::string(PJEMU_BINARY_DIR) + "/test-kubelet-informer-" + std::to_string(getpid());
    opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
    opts.gpus = 0;
    opts.cpu = "4";
    opts.memory = "8Gi";
    kubelet = std::make_unique<Kubelet>(flaky, loop, runner, opts);
    REQUIRE(kubelet->Start().ok());
    REQUIRE(scheduler.Start().ok());
    loop.RunUntilIdle();
  }
  ~FlakyNode() {
    kubelet->Stop();
    scheduler.Stop();
  }
  std::string Phase(const std::string& name) {
    auto pod = local->Get(api::Pods(), "default", name);
    return pod.ok() ? (*pod)["status"].value("phase", "") : "<gone>";
  }
};

TEST_CASE("a failing re-watch does not leave the node deaf: it catches up once the API is back",
          "[kubelet][informer]") {
  FlakyNode n;
  n.flaky.down = true;
  n.flaky.DropWatches();  // the pods stream ends and cannot be reopened
  REQUIRE(n.local->Create(api::Pods(), "default", SimplePod("late")).ok());
  n.loop.RunFor(2min);
  CHECK(n.local->Get(api::Pods(), "default", "late").value()["spec"]["nodeName"] == "pjemu-node");
  CHECK(n.runner.started() == 0);     // bound, but the kubelet cannot hear of it yet
  CHECK(n.flaky.failures > 3);        // it kept trying
  n.flaky.down = false;
  n.loop.RunFor(40s);  // the next retry (backoff capped at 30 s) relists
  CHECK(n.runner.started() == 1);
  CHECK(n.Phase("late") == "Succeeded");
}

TEST_CASE("a pod deleted while the kubelet's stream was broken is killed after the relist",
          "[kubelet][informer]") {
  FlakyNode n;
  REQUIRE(n.local->Create(api::Pods(), "default", SimplePod("doomed")).ok());
  n.loop.RunFor(2s);
  REQUIRE(n.Phase("doomed") == "Running");
  REQUIRE(n.runner.running() == 1);
  n.flaky.BreakWatches(Code::kExpired);  // the stream ends with 410: its DELETED is never seen
  api::DeleteOptions now;
  now.grace_period_seconds = 0;
  REQUIRE(n.local->Delete(api::Pods(), "default", "doomed", now).ok());
  n.loop.RunFor(1s);
  CHECK(n.runner.running() == 0);
  CHECK(n.kubelet->pod_count() == 0);
}

}  // namespace
}  // namespace pjemu::kubelet
