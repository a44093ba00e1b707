// Node-level faults on a virtual-time cluster (FakeClock, simulated processes, no sleeps): the
// kubelet's eviction, image pull delays (the SlowRegistry decorator), a node going down and
// coming back through the Injector (node lifecycle steps), and the log and metrics triggers.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "emulator/cluster/cluster.h"
#include "emulator/faults/injector.h"
#include "emulator/faults/slow_registry.h"

namespace pjemu {
namespace {

Json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             {{{"name", "main"}, {"image", "busybox"}, {"command", {"sh", "-c", "work"}}}}}}}};
}

process::SimulatedOutcome TenMinutes(const process::ProcessSpec&) {
  process::SimulatedOutcome out;
  out.runtime = 10min;
  out.output = {"starting", "epoch 1 done"};
  return out;
}

Json Condition(const Json& object, const std::string& type) {
  for (const Json& c : object.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return Json();
}

struct Cluster {
  faults::SlowRegistry* registry = nullptr;  // the current kubelet's image pulls
  cluster::Cluster vc{[this] {
    cluster::ClusterOptions o;
    o.clock = cluster::ClockKind::kVirtual;
    o.processes = cluster::ProcessKind::kSimulated;
    o.loop = cluster::LoopKind::kCaller;
    o.gpus = 0;
    o.cpu = "8";
    o.memory = "32Gi";
    o.script = TenMinutes;
    o.wrap_images = [this](kubelet::ImagePuller& inner) {
      auto r = std::make_unique<faults::SlowRegistry>(inner);
      registry = r.get();
      return std::unique_ptr<kubelet::ImagePuller>(std::move(r));
    };
    return o;
  }()};
  Cluster() { REQUIRE(vc.Start().ok()); }
  Json Get(const std::string& name) {
    auto pod = vc.client().Get(api::Pods(), "default", name);
    return pod.ok() ? *pod : Json();
  }
  std::string Phase(const std::string& name) {
    return Get(name).value("status", Json::object()).value("phase", "");
  }
  int Events(const std::string& reason) {
    auto list = vc.client().List(api::Events(), "");
    int n = 0;
    for (const Json& e : list->value("items", Json::array())) n += e.value("reason", "") == reason;
    return n;
  }
};

TEST_CASE("EvictPod ends a running pod Failed with reason Evicted", "[faults][node]") {
  Cluster c;
  REQUIRE(c.vc.client().Create(api::Pods(), "default", Pod("p")).ok());
  c.vc.loop().RunFor(30s);
  REQUIRE(c.Phase("p") == "Running");
  REQUIRE(c.vc.EvictPod("default", "p", "").ok());
  c.vc.loop().RunFor(1s);
  const Json pod = c.Get("p");
  const Json status = pod["status"];
  CHECK(status.value("phase", "") == "Failed");
  CHECK(status.value("reason", "") == "Evicted");
  CHECK_THAT(status.value("message", ""),
             Catch::StartsWith("The node was low on resource: memory."));
  const Json dt = Condition(pod, "DisruptionTarget");
  CHECK(dt.value("status", "") == "True");
  CHECK(dt.value("reason", "") == "TerminationByKubelet");
  const Json term = status["containerStatuses"][0]["state"]["terminated"];
  CHECK(term.value("exitCode", 0) == 137);
  CHECK(c.Events("Evicted") == 1);
  // Nothing restarts it, and a second eviction is refused as not running there any more.
  c.vc.loop().RunFor(5min);
  CHECK(c.Phase("p") == "Failed");
  CHECK(c.vc.EvictPod("default", "nope", "").code() == Code::kNotFound);
}

TEST_CASE("SlowRegistry keeps a pod in ContainerCreating until the pull is done",
          "[faults][node]") {
  Cluster c;
  REQUIRE(c.registry != nullptr);
  c.registry->SetDelay("docker.io/library/busybox:*", 2min);
  REQUIRE(c.vc.client().Create(api::Pods(), "default", Pod("p")).ok());
  c.vc.loop().RunFor(1min);
  Json status = c.Get("p")["status"];
  CHECK(status.value("phase", "") == "Pending");
  CHECK(status["containerStatuses"][0]["state"]["waiting"].value("reason", "") ==
        "ContainerCreating");
  CHECK(c.Events("Pulling") == 1);
  CHECK(c.Events("Pulled") == 0);
  c.vc.loop().RunFor(70s);
  CHECK(c.Phase("p") == "Running");
  CHECK(c.Events("Pulled") == 1);
}

TEST_CASE("node-down: NotReady after the grace period, pods evicted, node back on node-up",
          "[faults][node]") {
  Cluster c;
  REQUIRE(c.vc.client().Create(api::Pods(), "default", Pod("p")).ok());
  c.vc.loop().RunFor(10s);
  REQUIRE(c.Phase("p") == "Running");
  faults::Injector injector(c.vc.loop(), c.vc.client());
  faults::NodeSeams seams;
  seams.power = [&](const std::string& node, bool up) { return c.vc.SetNodePower(node, up); };
  injector.SetNodeSeams(seams);
  faults::FaultSpec down;
  down.id = "down";
  down.action.kind = faults::ActionKind::kNodeDown;
  down.action.node_timing = {40s, 5min};
  REQUIRE(injector.Add(down).ok());
  faults::FaultSpec up;
  up.id = "up";
  up.trigger.kind = faults::Trigger::Kind::kAfterFault;
  up.trigger.fault = "down";
  up.trigger.delay = 10min;
  up.action.kind = faults::ActionKind::kNodeUp;
  REQUIRE(injector.Add(up).ok());
  auto events = *c.vc.client().Watch(api::Events(), "");
  injector.Arm();
  auto node = [&] { return *c.vc.client().Get(api::Nodes(), "", "pjemu-node"); };

  c.vc.loop().RunFor(30s);  // heartbeats stopped, not yet noticed
  CHECK(Condition(node(), "Ready").value("status", "") == "True");
  CHECK(c.Phase("p") == "Running");  // nobody reports the dead process
  c.vc.loop().RunFor(15s);
  Json ready = Condition(node(), "Ready");
  CHECK(ready.value("status", "") == "Unknown");
  CHECK(ready.value("reason", "") == "NodeStatusUnknown");
  CHECK(ready.value("message", "") == "Kubelet stopped posting node status.");
  CHECK(node()["spec"]["taints"].size() == 2);
  CHECK(Condition(c.Get("p"), "Ready").value("status", "") == "False");
  CHECK(c.Events("NodeNotReady") >= 1);

  c.vc.loop().RunFor(5min);
  CHECK(c.Get("p").is_null());  // evicted, failed and removed
  // (The store drops a removed pod's events; the watch saw it.)
  int taint_evictions = 0;
  while (auto ev = events->TryNext()) {
    taint_evictions += ev->type == api::WatchEvent::Type::kAdded &&
                       ev->object().value("reason", "") == "TaintManagerEviction";
  }
  CHECK(taint_evictions == 1);

  c.vc.loop().RunFor(6min);  // node-up at 10 min after node-down
  CHECK(Condition(node(), "Ready").value("status", "") == "True");
  CHECK_FALSE(node()["spec"].contains("taints"));
  REQUIRE(injector.log().size() == 4);  // down, NotReady, evicted, up
  CHECK(injector.log()[3].what == "node-up pjemu-node");
}

TEST_CASE("log and metrics triggers fire once their text appears", "[faults][node]") {
  Cluster c;
  std::string metrics;
  faults::Injector injector(c.vc.loop(), c.vc.client());
  faults::NodeSeams seams;
  seams.read_log = [&](const std::string& ns, const std::string& pod, const std::string&) {
    auto file = c.vc.logs().Find({ns, pod, "", false});
    if (!file.ok()) return std::string();
    std::ifstream in(file->path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  seams.read_metrics = [&](const std::string&, const std::string&) { return metrics; };
  seams.evict = [&](const std::string& ns, const std::string& pod, const std::string& m) {
    return c.vc.EvictPod(ns, pod, m);
  };
  injector.SetNodeSeams(seams);
  faults::FaultSpec on_log;
  on_log.id = "on-log";
  on_log.trigger.kind = faults::Trigger::Kind::kLogMatch;
  on_log.trigger.pod.name = "p";
  on_log.trigger.regex = "^epoch [0-9]+ done$";
  on_log.action.kind = faults::ActionKind::kEvict;
  on_log.action.target.name = "p";
  REQUIRE(injector.Add(on_log).ok());
  faults::FaultSpec on_metrics = on_log;
  on_metrics.id = "on-metrics";
  on_metrics.trigger.kind = faults::Trigger::Kind::kMetrics;
  on_metrics.trigger.step = 20;
  on_metrics.action.target.name = "q";
  REQUIRE(injector.Add(on_metrics).ok());
  faults::FaultSpec bad = on_log;
  bad.id = "bad";
  bad.trigger.regex = "(";
  CHECK(injector.Add(bad).code() == Code::kInvalid);
  injector.Arm();
  c.vc.loop().RunFor(5s);
  CHECK(injector.log().empty());  // no pod p yet
  REQUIRE(c.vc.client().Create(api::Pods(), "default", Pod("p")).ok());
  REQUIRE(c.vc.client().Create(api::Pods(), "default", Pod("q")).ok());
  c.vc.loop().RunFor(5s);
  REQUIRE(injector.log().size() == 1);
  CHECK(injector.log()[0].id == "on-log");
  CHECK(c.Phase("p") == "Failed");
  metrics = "{\"type\":\"step\",\"step\":10}\n{\"type\":\"step\",\"st";  // a line being written
  c.vc.loop().RunFor(5s);
  CHECK(injector.log().size() == 1);
  metrics = "{\"type\":\"step\",\"step\":10}\n{\"type\":\"step\",\"step\":20}\n";
  c.vc.loop().RunFor(1s);
  REQUIRE(injector.log().size() == 2);
  CHECK(injector.log()[1].id == "on-metrics");
  CHECK(c.Phase("q") == "Failed");
}

}  // namespace
}  // namespace pjemu
