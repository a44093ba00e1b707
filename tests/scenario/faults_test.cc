// FaultyClient, FaultyProcessRunner and Injector over a real Store and a SimulatedProcessRunner
// on a FakeClock: every fault is observed through the seam it decorates. No sleeps.
#include <catch2/catch.hpp>
#include <csignal>

#include "emulator/api/disruption.h"
#include "emulator/client/local_client.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"
#include "emulator/faults/injector.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/process/simulated_process_runner.h"
#include "emulator/store/store.h"
#include "tests/support/disruption_objects.h"

namespace pjemu::faults {
namespace {

Json Pod(const std::string& name, const std::string& role = "worker") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"role", role}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> local = client::MakeLocalClient(store);
};

TEST_CASE("FaultyClient fails exactly the Nth matching write", "[faults]") {
  Fixture f;
  FaultyClient c(*f.local);
  ClientFaultRule rule;
  rule.verb = "create";
  rule.resource = "pods";
  rule.nth = 2;
  rule.code = Code::kConflict;
  REQUIRE(c.AddRule(rule).ok());
  CHECK(c.Create(api::Pods(), "default", Pod("a")).ok());
  auto second = c.Create(api::Pods(), "default", Pod("b"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == Code::kConflict);
  CHECK_THAT(second.status().message(), Catch::Contains("create pods"));
  CHECK(c.Create(api::Pods(), "default", Pod("c")).ok());
  CHECK(c.Get(api::Pods(), "default", "a").ok());               // reads do not match "create"
  CHECK_FALSE(f.local->Get(api::Pods(), "default", "b").ok());  // the failed call never reached it
  CHECK(c.injected() == 1);
}

TEST_CASE("FaultyClient seeded rate replays the same failures", "[faults]") {
  auto pattern = [](std::uint64_t seed) {
    Fixture f;
    FaultyClient c(*f.local, seed);
    ClientFaultRule rule;
    rule.rate = 0.3;
    REQUIRE(c.AddRule(rule).ok());
    std::string out;
    for (int i = 0; i < 40; ++i) {
      out += c.Create(api::Pods(), "default", Pod("p" + std::to_string(i))).ok() ? '.' : 'x';
    }
    return out;
  };
  std::string a = pattern(5);
  CHECK(a == pattern(5));
  CHECK(a != pattern(6));
  auto failures = std::count(a.begin(), a.end(), 'x');
  CHECK(failures > 3);
  CHECK(failures < 25);
}

TEST_CASE("FaultyClient rejects malformed rules naming the field", "[faults]") {
  Fixture f;
  FaultyClient c(*f.local);
  ClientFaultRule rule;
  rule.verb = "explode";
  rule.rate = 0.5;
  auto r = c.AddRule(rule);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith("verb:"));
  rule.verb = "write";
  rule.rate = 1.5;
  CHECK_THAT(c.AddRule(rule).status().message(), Catch::StartsWith("rate:"));
}

// The kubelet asks the runner whether its processes are real (a sandbox, a network and DNS for
// them): a decorated simulated runner must say no, or a virtual-time scenario gets a real
// dnsmasq whose start, in real time, shifts its virtual timeline.
TEST_CASE("FaultyProcessRunner answers real() for the runner it wraps", "[faults]") {
  Fixture f;
  process::SimulatedProcessRunner sim(f.loop, [](const process::ProcessSpec&) {
    return process::SimulatedOutcome{};
  });
  process::PosixProcessRunner posix(f.loop);
  CHECK_FALSE(FaultyProcessRunner(sim).real());
  CHECK(FaultyProcessRunner(posix).real());
}

TEST_CASE("FaultyProcessRunner kills, rewrites exit codes, and finds processes by pod",
          "[faults]") {
  Fixture f;
  process::SimulatedProcessRunner sim(f.loop, [](const process::ProcessSpec&) {
    process::SimulatedOutcome o;
    o.runtime = 10min;
    return o;
  });
  FaultyProcessRunner runner(sim);
  std::vector<process::ProcessExit> exits;
  auto start = [&](const std::string& name) {
    process::ProcessSpec spec;
    spec.argv = {"train"};
    spec.name = name;
    REQUIRE(runner.Start(spec, [&](const process::ProcessExit& e) { exits.push_back(e); }).ok());
  };
  start("default/job-worker-0/pytorch");
  start("default/job-worker-1/pytorch");
  CHECK(runner.Find("default", "job-worker-0").size() == 1);
  CHECK(runner.Find("default", "job-worker-0", "other").empty());

  REQUIRE(runner.ExitWith("default", "job-worker-0", 137).ok());
  REQUIRE(runner.Kill("default", "job-worker-1", SIGTERM).ok());
  f.loop.RunUntilIdle();
  REQUIRE(exits.size() == 2);
  CHECK(exits[0].exit_code == 137);
  CHECK(exits[0].signal == 0);
  CHECK(exits[1].exit_code == 128 + SIGTERM);
  CHECK(exits[1].signal == SIGTERM);
  CHECK(runner.Find("default", "job-worker-0").empty());
  CHECK(runner.Kill("default", "job-worker-0", SIGKILL).code() == Code::kNotFound);
  CHECK(runner.acted() == 2);
}

TEST_CASE("Injector fires timed, condition and after-fault triggers in virtual time", "[faults]") {
  Fixture f;
  process::SimulatedProcessRunner sim(f.loop, [](const process::ProcessSpec&) {
    process::SimulatedOutcome o;
    o.runtime = 1h;
    return o;
  });
  FaultyProcessRunner runner(sim);
  FaultyClient api(*f.local);
  std::vector<std::pair<std::string, int>> exits;
  for (const char* pod : {"w-0", "w-1"}) {
    REQUIRE(f.local->Create(api::Pods(), "default", Pod(pod)).ok());
    process::ProcessSpec spec;
    spec.argv = {"train"};
    spec.name = std::string("default/") + pod + "/c";
    REQUIRE(runner
                .Start(spec,
                       [&exits, pod](const process::ProcessExit& e) {
                         exits.emplace_back(pod, e.exit_code);
                       })
                .ok());
  }
  Injector inj(f.loop, *f.local);
  inj.SetProcessFaults(&runner);
  inj.SetApiFaults(&api);
  int hook_calls = 0;
  inj.SetHook("restart-controller", [&] {
    ++hook_calls;
    return Status::Ok();
  });

  FaultSpec kill{"kill-w0", {}, {}};
  kill.trigger.delay = 30s;
  kill.action.kind = ActionKind::kExit;
  kill.action.exit_code = 3;
  kill.action.target.name = "w-0";
  REQUIRE(inj.Add(kill).ok());
  FaultSpec after{"then-selector", {}, {}};
  after.trigger.kind = Trigger::Kind::kAfterFault;
  after.trigger.fault = "kill-w0";
  after.trigger.delay = 10s;
  after.action.kind = ActionKind::kKill;
  after.action.target.label_selector = "role=worker";
  after.action.target.name = "";
  REQUIRE(inj.Add(after).ok());
  FaultSpec hook{"hook", {}, {}};
  hook.trigger.kind = Trigger::Kind::kJobCondition;
  hook.trigger.job = "j";
  hook.trigger.condition = "Running";
  hook.action.kind = ActionKind::kHook;
  hook.action.hook = "restart-controller";
  REQUIRE(inj.Add(hook).ok());

  FaultSpec bad{"bad", {}, {}};
  bad.trigger.kind = Trigger::Kind::kAfterFault;
  bad.trigger.fault = "nope";
  bad.action.kind = ActionKind::kHook;
  bad.action.hook = "restart-controller";
  CHECK_THAT(inj.Add(bad).message(), Catch::StartsWith("after:"));

  inj.Arm();
  f.loop.RunFor(29s);
  CHECK(exits.empty());
  f.loop.RunFor(2s);
  REQUIRE(exits.size() == 1);
  CHECK(exits[0] == std::make_pair(std::string("w-0"), 3));
  f.loop.RunFor(10s);
  REQUIRE(exits.size() == 2);  // w-0 is gone; the selector's kill reaches w-1
  CHECK(exits[1] == std::make_pair(std::string("w-1"), 128 + SIGKILL));
  CHECK(hook_calls == 0);
  CHECK_FALSE(inj.done());

  // A job the store admits (the webhook refuses one without replica specs); nothing runs it.
  Json container = {{"name", "pytorch"}, {"image", "busybox"}};
  Json master = {{"replicas", 1},
                 {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
  Json job = {{"apiVersion", "kubeflow.org/v1"},
              {"kind", "PyTorchJob"},
              {"metadata", {{"name", "j"}}},
              {"spec", {{"pytorchReplicaSpecs", {{"Master", master}}}}}};
  REQUIRE(f.local->Create(api::PyTorchJobs(), "default", job).ok());
  f.loop.RunFor(2s);
  CHECK(hook_calls == 0);  // no Running condition yet
  Json status = {{"status", {{"conditions", {{{"type", "Running"}, {"status", "True"}}}}}}};
  REQUIRE(f.local
              ->Patch(api::PyTorchJobs(), "default", "j", api::PatchType::kMerge, status,
                      api::Subresource::kStatus)
              .ok());
  f.loop.RunFor(1s);
  CHECK(hook_calls == 1);
  CHECK(inj.done());
  REQUIRE(inj.log().size() == 3);
  CHECK(inj.log()[0].id == "kill-w0");
  CHECK(inj.log()[0].at == Time(std::chrono::seconds(FakeClock::kEpochSeconds)) + 30s);
  CHECK_FALSE(inj.log()[1].result.ok());  // w-0 had already exited
}

}  // namespace
}  // namespace pjemu::faults

namespace pjemu::faults {
namespace {

TEST_CASE("Injector cordons and uncordons a node through the API", "[faults]") {
  // Given a node, cordon at 10s should set spec.unschedulable, uncordon 5s later clear it.
  Fixture f;
  REQUIRE(f.local
              ->Create(api::Nodes(), "",
                       {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}})
              .ok());
  Injector inj(f.loop, *f.local);
  FaultSpec cordon{"cordon", {}, {}};
  cordon.trigger.delay = 10s;
  cordon.action.kind = ActionKind::kCordon;
  cordon.action.node = "n1";
  REQUIRE(inj.Add(cordon).ok());
  FaultSpec uncordon{"uncordon", {}, {}};
  uncordon.trigger.kind = Trigger::Kind::kAfterFault;
  uncordon.trigger.fault = "cordon";
  uncordon.trigger.delay = 5s;
  uncordon.action.kind = ActionKind::kUncordon;
  uncordon.action.node = "n1";
  REQUIRE(inj.Add(uncordon).ok());
  auto unschedulable = [&] {
    auto node = f.local->Get(api::Nodes(), "", "n1");
    REQUIRE(node.ok());
    return node->value("spec", Json::object()).value("unschedulable", false);
  };
  inj.Arm();
  f.loop.RunFor(11s);
  CHECK(unschedulable());
  f.loop.RunFor(5s);
  CHECK_FALSE(unschedulable());
  REQUIRE(inj.log().size() == 2);
  CHECK(inj.log()[0].what == "cordon n1");
  CHECK(inj.log()[0].result.ok());
  CHECK(inj.log()[1].what == "uncordon n1");

  SECTION("a cordon without a node acts on the cluster's only node") {
    FaultSpec only{"only", {}, {}};
    only.action.kind = ActionKind::kCordon;
    only.action.node = "";
    Injector again(f.loop, *f.local);
    REQUIRE(again.Add(only).ok());
    again.Arm();
    f.loop.RunFor(1s);
    REQUIRE(again.log().size() == 1);
    CHECK(again.log()[0].what == "cordon n1");
    CHECK(unschedulable());
  }
}

}  // namespace
}  // namespace pjemu::faults

namespace pjemu::faults {
namespace {

// A pod bound to `node` (its deletion is graceful: it stays, terminating), of job "mnist" (the
// budget's) unless not `budgeted`.
Json BoundPod(const std::string& name, const std::string& node, bool budgeted = true) {
  Json pod = Pod(name);
  if (budgeted) pod["metadata"]["labels"]["training.kubeflow.org/job-name"] = "mnist";
  pod["spec"]["nodeName"] = node;
  pod["spec"]["terminationGracePeriodSeconds"] = 30;
  return pod;
}

void CreateReady(client::Client& c, Json pod) {
  const std::string name = pod["metadata"]["name"];
  REQUIRE(c.Create(api::Pods(), "default", std::move(pod)).ok());
  REQUIRE(c.Patch(api::Pods(), "default", name, api::PatchType::kMerge,
                  testing::RunningReadyStatus(), api::Subresource::kStatus)
              .ok());
}

bool Terminating(client::Client& c, const std::string& name) {
  auto pod = c.Get(api::Pods(), "default", name);
  return pod.ok() && pod->at("metadata").contains("deletionTimestamp");
}

TEST_CASE("Injector evict-pod goes through pods/eviction: a budget's 429 is the fault's answer",
          "[faults][eviction]") {
  Fixture f;
  CreateReady(*f.local, BoundPod("p", "n1"));
  REQUIRE(f.local->Create(api::PodDisruptionBudgets(), "default", testing::KeepOneMnistPod()).ok());
  Injector inj(f.loop, *f.local);
  FaultSpec evict{"evict", {}, {}};
  evict.trigger.delay = 1s;
  evict.action.kind = ActionKind::kEvictPod;
  evict.action.target.name = "p";
  REQUIRE(inj.Add(evict).ok());
  FaultSpec again{"again", {}, {}};
  again.trigger.kind = Trigger::Kind::kAfterFault;
  again.trigger.fault = "evict";
  again.trigger.delay = 1s;
  again.action = evict.action;
  REQUIRE(inj.Add(again).ok());
  inj.Arm();
  f.loop.RunFor(1500ms);
  REQUIRE(inj.log().size() == 1);
  CHECK(inj.log()[0].what == "evict-pod default/p");
  CHECK(inj.log()[0].result.code() == Code::kTooManyRequests);
  CHECK(inj.log()[0].result.message() == api::kEvictionRefusedMessage);
  CHECK_FALSE(Terminating(*f.local, "p"));
  REQUIRE(f.local->Delete(api::PodDisruptionBudgets(), "default", "keep").ok());
  f.loop.RunFor(1s);
  REQUIRE(inj.log().size() == 2);
  CHECK(inj.log()[1].result.ok());
  CHECK(Terminating(*f.local, "p"));
}

TEST_CASE("Injector drain cordons, evicts what needs it and retries 429s until its timeout",
          "[faults][eviction]") {
  // Given node n1 with two budgeted pods, a DaemonSet pod and a mirror pod, and a pod on n2,
  // a drain should cordon n1, evict one budgeted pod at once and retry the other every second.
  Fixture f;
  for (const char* node : {"n1", "n2"}) {
    REQUIRE(f.local
                ->Create(api::Nodes(), "",
                         {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}}}})
                .ok());
  }
  CreateReady(*f.local, BoundPod("p", "n1"));
  CreateReady(*f.local, BoundPod("q", "n1"));
  Json ds = BoundPod("ds", "n1", false);
  ds["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "apps/v1"},
                                                    {"kind", "DaemonSet"},
                                                    {"name", "d"},
                                                    {"uid", "u"},
                                                    {"controller", true}}});
  CreateReady(*f.local, ds);
  Json mirror = BoundPod("m", "n1", false);
  mirror["metadata"]["annotations"] = {{"kubernetes.io/config.mirror", "x"}};
  CreateReady(*f.local, mirror);
  CreateReady(*f.local, BoundPod("elsewhere", "n2", false));
  REQUIRE(f.local->Create(api::PodDisruptionBudgets(), "default", testing::KeepOneMnistPod()).ok());

  Injector inj(f.loop, *f.local);
  FaultSpec drain{"drain", {}, {}};
  drain.action.kind = ActionKind::kDrain;
  drain.action.node = "n1";
  drain.action.timeout = 3s;

  SECTION("a pod still refused at the timeout is named, with the 429") {
    REQUIRE(inj.Add(drain).ok());
    inj.Arm();
    f.loop.RunFor(100ms);
    CHECK(f.local->Get(api::Nodes(), "", "n1")->at("spec").value("unschedulable", false));
    CHECK(Terminating(*f.local, "p"));
    CHECK_FALSE(Terminating(*f.local, "q"));
    CHECK_FALSE(Terminating(*f.local, "ds"));
    CHECK_FALSE(Terminating(*f.local, "m"));
    CHECK_FALSE(Terminating(*f.local, "elsewhere"));
    CHECK(inj.log().empty());  // still retrying
    f.loop.RunFor(4s);
    REQUIRE(inj.log().size() == 1);
    CHECK(inj.log()[0].what ==
          "drain n1 cordoned, evicted 1 (default/p), still refused after 3s (default/q)");
    CHECK(inj.log()[0].result.code() == Code::kTooManyRequests);
  }
  SECTION("a refused pod is evicted on a retry once the budget allows it") {
    REQUIRE(inj.Add(drain).ok());
    inj.Arm();
    f.loop.RunFor(1500ms);
    CreateReady(*f.local, BoundPod("new", "n2"));  // the budget is met without q
    f.loop.RunFor(1s);
    REQUIRE(inj.log().size() == 1);
    CHECK(inj.log()[0].what == "drain n1 cordoned, evicted 2 (default/p default/q)");
    CHECK(inj.log()[0].result.ok());
    CHECK(Terminating(*f.local, "q"));
  }
  SECTION("no node named: the cluster's only node, or an answer saying there are several") {
    drain.action.node = "";
    REQUIRE(inj.Add(drain).ok());
    inj.Arm();
    f.loop.RunFor(100ms);
    REQUIRE(inj.log().size() == 1);
    CHECK(inj.log()[0].result.code() == Code::kInvalid);
    CHECK_THAT(inj.log()[0].result.message(), Catch::Contains("2 nodes"));
  }
}

}  // namespace
}  // namespace pjemu::faults
