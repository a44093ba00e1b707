// The one cluster::Cluster, one case per wiring its options choose: virtual clock + simulated
// processes + the caller's loop (scenarios, benchmarks), real clock + real processes on a loop
// thread of its own with and without the API server (`run`, `serve`), real clock + real
// processes + the caller's loop (real-time scenarios), real clock + simulated processes on its
// own thread (fault actions from another thread), persistence on and off; then Stop's promise
// (no process group left, the temporary state directory removed), the options it refuses, the
// image check and the seams the faults decorators wrap. Real processes are `sh -c` commands of
// the busybox image (run with the host's sh); nothing trains.
#include "emulator/cluster/cluster.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "emulator/api/base64.h"
#include "emulator/client/http_client.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"
#include "emulator/faults/slow_registry.h"

namespace pjemu {
namespace {

using cluster::ClockKind;
using cluster::ClusterOptions;
using cluster::LoopKind;
using cluster::ProcessKind;

Json Pod(const std::string& name, const std::string& script) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             Json::array(
                 {{{"name", "main"}, {"image", "busybox"}, {"command", {"sh", "-c", script}}}})}}}};
}

Json Job(const std::string& name, int masters) {
  Json container = {{"name", "pytorch"}, {"image", "busybox"}, {"command", {"sh", "-c", "true"}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"pytorchReplicaSpecs",
             {{"Master",
               {{"replicas", masters},
                {"restartPolicy", "OnFailure"},
                {"template", {{"spec", {{"containers", Json::array({container})}}}}}}}}}}}};
}

// Virtual clock, simulated processes, the caller's loop: the scenario and benchmark wiring.
ClusterOptions Virtual() {
  ClusterOptions o;
  o.clock = ClockKind::kVirtual;
  o.processes = ProcessKind::kSimulated;
  o.loop = LoopKind::kCaller;
  o.gpus = 0;
  o.cpu = "8";
  o.memory = "32Gi";
  return o;
}

// Real clock and real processes (`run`'s defaults) on a node without GPUs.
ClusterOptions Real(LoopKind loop) {
  ClusterOptions o;
  o.loop = loop;
  o.gpus = 0;
  return o;
}

std::string PodPhase(client::Client& c, const std::string& name) {
  auto pod = c.Get(api::Pods(), "default", name);
  return pod.ok() ? pod->value("status", Json::object()).value("phase", "") : "";
}

bool JobSucceeded(client::Client& c, const std::string& name) {
  auto job = c.Get(api::PyTorchJobs(), "default", name);
  if (!job.ok()) return false;
  for (const Json& cond : job->value("status", Json::object()).value("conditions", Json::array())) {
    if (cond.value("type", "") == "Succeeded" && cond.value("status", "") == "True") return true;
  }
  return false;
}

// Waits on the wall clock (a loop on its own thread) until pred() or the timeout.
template <typename Pred>
bool WaitFor(Pred pred, std::chrono::seconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// Processes of process group pgid that still run (zombies waiting for init to reap them, once
// reparented, do not count).
int LiveInGroup(process::Pid pgid) {
  int live = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != "Z") {
      ++live;
      UNSCOPED_INFO("pid " << name << " state " << state);
    }
  }
  return live;
}

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("pjemu-cluster-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST_CASE("virtual clock, simulated processes, caller's loop: a job succeeds in virtual time",
          "[cluster]") {
  cluster::Cluster c(Virtual());
  REQUIRE(c.Start().ok());
  CHECK(c.clock().IsVirtual());
  const std::string state_dir = c.state_dir();
  CHECK(Exists(state_dir));
  REQUIRE(c.client().Create(api::PyTorchJobs(), "default", Job("j", 1)).ok());
  // The store admits PyTorchJobs with the webhook: two masters are refused.
  CHECK(c.client().Create(api::PyTorchJobs(), "default", Job("two", 2)).status().code() ==
        Code::kForbidden);
  const Time start = c.clock().Now();
  for (int i = 0; i < 120 && !JobSucceeded(c.client(), "j"); ++i) c.Step(1s);
  CHECK(JobSucceeded(c.client(), "j"));
  CHECK(c.clock().Now() - start < 2min);  // virtual time; the test took milliseconds
  CHECK(c.MetricsPath(Pod("j-master-0", "true")).empty());  // no trainer runs
  c.Stop();
  CHECK_FALSE(Exists(state_dir));
}

TEST_CASE("real clock, real processes, own loop thread: pods run as local processes (run)",
          "[cluster]") {
  cluster::Cluster c(Real(LoopKind::kOwnThread));
  REQUIRE(c.Start().ok());
  CHECK_FALSE(c.clock().IsVirtual());
  CHECK(c.api_port() == 0);
  CHECK(c.Kubeconfig().empty());
  const std::string state_dir = c.state_dir();
  REQUIRE(c.client().Create(api::Pods(), "default", Pod("ok", "echo hello")).ok());
  REQUIRE(c.client().Create(api::Pods(), "default", Pod("bad", "exit 3")).ok());
  CHECK(WaitFor([&] { return PodPhase(c.client(), "ok") == "Succeeded"; }));
  CHECK(WaitFor([&] { return PodPhase(c.client(), "bad") == "Failed"; }));
  auto log = c.logs().Find({"default", "ok", "main", false});
  REQUIRE(log.ok());
  CHECK_THAT(log->path, Catch::StartsWith(state_dir));
  c.Stop();
  CHECK_FALSE(Exists(state_dir));
  c.Stop();  // idempotent
}

TEST_CASE("real clock, real processes, own loop thread, API server: HTTP clients reach it (serve)",
          "[cluster]") {
  ClusterOptions o = Real(LoopKind::kOwnThread);
  o.api_server = true;
  o.port = 0;
  cluster::Cluster c(o);
  REQUIRE(c.Start().ok());
  REQUIRE(c.api_port() > 0);
  // HTTPS by default, the CA in the kubeconfig (certificate-authority-data) and nothing else.
  std::string kubeconfig = c.Kubeconfig();
  CHECK_THAT(kubeconfig, Catch::Contains("https://127.0.0.1:" + std::to_string(c.api_port())));
  CHECK_THAT(kubeconfig, !Catch::Contains("insecure-skip-tls-verify"));
  const std::string ca_key = "certificate-authority-data: ";
  std::size_t at = kubeconfig.find(ca_key);
  REQUIRE(at != std::string::npos);
  at += ca_key.size();
  auto ca = api::DecodeBase64(kubeconfig.substr(at, kubeconfig.find('\n', at) - at));
  REQUIRE(ca.has_value());
  client::HttpClientOptions ho;
  ho.server = "https://127.0.0.1:" + std::to_string(c.api_port());
  ho.ca_pem = *ca;
  client::HttpClient http(ho);
  REQUIRE(http.Create(api::Pods(), "default", Pod("p", "true")).ok());
  CHECK(WaitFor([&] { return PodPhase(http, "p") == "Succeeded"; }));
  // A pod no scheduler here serves, bound by hand through pods/binding, runs on the node.
  Json manual = Pod("manual", "true");
  manual["spec"]["schedulerName"] = "by-hand";
  REQUIRE(http.Create(api::Pods(), "default", manual).ok());
  api::PodBinding binding;
  binding.node = "pjemu-node";
  REQUIRE(http.Bind("default", "manual", binding).ok());
  CHECK(http.Bind("default", "manual", binding).code() == Code::kConflict);
  CHECK(WaitFor([&] { return PodPhase(http, "manual") == "Succeeded"; }));
  auto console = http.Request("GET", "/ui/", {}, {}, "text/html");
  REQUIRE(console.ok());
  CHECK(console->status == 200);
  // The node's power stays on while the API server reads the kubelet's logs.
  CHECK(c.SetNodePower("pjemu-node", false).code() == Code::kInvalid);
  c.Stop();
  CHECK_FALSE(http.Get(api::Pods(), "default", "p").ok());
}

TEST_CASE("real clock, real processes, caller's loop: Step runs the pods (real-time scenarios)",
          "[cluster]") {
  cluster::Cluster c(Real(LoopKind::kCaller));
  REQUIRE(c.Start().ok());
  REQUIRE(c.client().Create(api::Pods(), "default", Pod("p", "sleep 0.2")).ok());
  auto start = std::chrono::steady_clock::now();
  while (PodPhase(c.client(), "p") != "Succeeded" &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    c.Step(100ms);
  }
  CHECK(PodPhase(c.client(), "p") == "Succeeded");
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200));
}

TEST_CASE("real clock, simulated processes, own loop thread: fault actions run on the loop",
          "[cluster]") {
  ClusterOptions o = Real(LoopKind::kOwnThread);
  o.processes = ProcessKind::kSimulated;
  o.script = [](const process::ProcessSpec&) {
    process::SimulatedOutcome out;
    out.runtime = 10min;
    return out;
  };
  cluster::Cluster c(o);
  REQUIRE(c.Start().ok());
  REQUIRE(c.client().Create(api::Pods(), "default", Pod("p", "work")).ok());
  REQUIRE(WaitFor([&] { return PodPhase(c.client(), "p") == "Running"; }));
  CHECK(c.RestartController().ok());
  CHECK(c.EvictPod("default", "nope", "").code() == Code::kNotFound);
  REQUIRE(c.EvictPod("default", "p", "").ok());
  CHECK(WaitFor([&] { return PodPhase(c.client(), "p") == "Failed"; }));
  CHECK(c.SetNodePower("other", false).code() == Code::kNotFound);
  CHECK(c.SetNodePower("pjemu-node", false).ok());
  CHECK(c.SetNodePower("pjemu-node", true).ok());
}

TEST_CASE("persistence on: a cluster restarted on its data_dir resumes, off: it starts empty",
          "[cluster]") {
  const std::string data_dir = TempDir("data");
  ClusterOptions o = Virtual();
  o.data_dir = data_dir;
  {
    cluster::Cluster c(o);
    REQUIRE(c.Start().ok());
    CHECK(c.state_dir() == std::filesystem::absolute(data_dir + "/state").string());
    REQUIRE(c.client().Create(api::PyTorchJobs(), "default", Job("kept", 1)).ok());
    for (int i = 0; i < 120 && !JobSucceeded(c.client(), "kept"); ++i) c.Step(1s);
    REQUIRE(JobSucceeded(c.client(), "kept"));
  }
  CHECK(Exists(data_dir + "/pjemu.db"));
  CHECK(Exists(data_dir + "/state"));  // logs survive with the store
  {
    cluster::Cluster c(o);
    REQUIRE(c.Start().ok());
    CHECK(JobSucceeded(c.client(), "kept"));
  }
  {
    cluster::Cluster c(Virtual());
    REQUIRE(c.Start().ok());
    CHECK(c.client().Get(api::PyTorchJobs(), "default", "kept").status().code() == Code::kNotFound);
  }
  std::filesystem::remove_all(data_dir);
}

// Storage as kind has it: the default class `standard`, a claim a pod names provisioned under
// <data_dir>/storage on the node the scheduler chose, kept across a restart.
TEST_CASE("with a data_dir, a pod's claim is provisioned under <data_dir>/storage and kept",
          "[cluster]") {
  const std::string data_dir = TempDir("storage");
  ClusterOptions o = Virtual();
  o.data_dir = data_dir;
  std::string path;
  {
    cluster::Cluster c(o);
    REQUIRE(c.Start().ok());
    REQUIRE(c.client().Get(api::StorageClasses(), "", "standard").ok());
    Json claim = {{"apiVersion", "v1"},
                  {"kind", "PersistentVolumeClaim"},
                  {"metadata", {{"name", "data"}, {"namespace", "default"}}},
                  {"spec",
                   {{"accessModes", {"ReadWriteOnce"}},
                    {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
    REQUIRE(c.client().Create(api::PersistentVolumeClaims(), "default", claim).ok());
    Json pod = Pod("user", "true");
    pod["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}};
    REQUIRE(c.client().Create(api::Pods(), "default", pod).ok());
    c.Step(5s);
    auto got = c.client().Get(api::PersistentVolumeClaims(), "default", "data");
    REQUIRE(got.ok());
    CHECK((*got)["status"]["phase"] == "Bound");
    auto pv = c.client().Get(api::PersistentVolumes(), "",
                             (*got)["spec"]["volumeName"].get<std::string>());
    REQUIRE(pv.ok());
    path = (*pv)["spec"]["hostPath"]["path"];
    CHECK(path.rfind(std::filesystem::absolute(data_dir).string() + "/storage/pvc-", 0) == 0);
    CHECK(std::filesystem::is_directory(path));
    auto p = c.client().Get(api::Pods(), "default", "user");
    REQUIRE(p.ok());
    CHECK((*p)["spec"]["nodeName"] == o.node_name);
  }
  {
    cluster::Cluster c(o);
    REQUIRE(c.Start().ok());
    c.Step(1s);
    CHECK(std::filesystem::is_directory(path));
    auto classes = c.client().List(api::StorageClasses(), "");
    REQUIRE(classes.ok());
    CHECK((*classes)["items"].size() == 1);
  }
  std::filesystem::remove_all(data_dir);
}

TEST_CASE("Stop kills every process group, waits for the exits and removes the temp state dir",
          "[cluster]") {
  for (LoopKind loop : {LoopKind::kOwnThread, LoopKind::kCaller}) {
    faults::FaultyProcessRunner* procs = nullptr;
    ClusterOptions o = Real(loop);
    o.wrap_runner = [&procs](process::ProcessRunner& inner) {
      auto r = std::make_unique<faults::FaultyProcessRunner>(inner);
      procs = r.get();
      return std::unique_ptr<process::ProcessRunner>(std::move(r));
    };
    cluster::Cluster c(o);
    Status started_ok = c.Start();
    INFO(started_ok.message());
    REQUIRE(started_ok.ok());
    REQUIRE(procs != nullptr);
    REQUIRE(c.client().Create(api::Pods(), "default", Pod("a", "sleep 600")).ok());
    REQUIRE(c.client().Create(api::Pods(), "default", Pod("b", "sleep 600 & sleep 600")).ok());
    auto both_running = [&] {
      return PodPhase(c.client(), "a") == "Running" && PodPhase(c.client(), "b") == "Running";
    };
    if (loop == LoopKind::kOwnThread) {
      REQUIRE(WaitFor(both_running));
    } else {
      for (int i = 0; i < 100 && !both_running(); ++i) c.Step(100ms);
      REQUIRE(both_running());
    }
    const std::vector<process::Pid> started = procs->started();
    REQUIRE(started.size() == 2);
    const std::string state_dir = c.state_dir();
    c.Stop();
    for (process::Pid pid : started) CHECK(LiveInGroup(pid) == 0);
    CHECK_FALSE(Exists(state_dir));
  }
}

TEST_CASE("Validate refuses the wirings that cannot run", "[cluster]") {
  ClusterOptions o = Virtual();
  o.processes = ProcessKind::kReal;
  CHECK(o.Validate().message() == "processes: real processes need the real clock");
  o = Virtual();
  o.loop = LoopKind::kOwnThread;
  CHECK(o.Validate().message() ==
        "loop: a virtual clock moves only when the caller drives the loop");
  o = Virtual();
  o.max_pods = 0;
  CHECK(o.Validate().code() == Code::kInvalid);
  cluster::Cluster c(o);
  CHECK(c.Start().code() == Code::kInvalid);
  o = Virtual();
  o.image_map = "no/such/images.yaml";
  cluster::Cluster missing(o);
  CHECK_FALSE(missing.Start().ok());
  CHECK((missing.state_dir().empty() || !Exists(missing.state_dir())));
}

TEST_CASE("CheckImages names the replica, the container and the field of an unmapped image",
          "[cluster]") {
  cluster::Cluster c(Virtual());
  REQUIRE(c.Start().ok());
  CHECK(c.CheckImages(api::PyTorchJobs(), Job("j", 1)).ok());
  Json job = Job("j", 1);
  job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["image"] =
      "registry.example/unknown:1";
  Status s = c.CheckImages(api::PyTorchJobs(), job);
  CHECK(s.code() == Code::kNotFound);
  CHECK_THAT(s.message(), Catch::StartsWith(
                              "spec.pytorchReplicaSpecs.Master container \"pytorch\": "
                              "ErrImagePull: failed to pull image \"registry.example/unknown:1\""));
  CHECK_THAT(s.message(), Catch::Contains("--image-map FILE"));
  CHECK(s.details().value("field", "") ==
        "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image");
}

TEST_CASE("the faults decorators wrap the seams from outside, one image wrapper per kubelet",
          "[cluster]") {
  faults::FaultyClient* api = nullptr;
  std::vector<faults::SlowRegistry*> registries;
  ClusterOptions o = Virtual();
  o.script = [](const process::ProcessSpec&) {
    process::SimulatedOutcome out;
    out.runtime = 10min;
    return out;
  };
  o.wrap_client = [&api](client::Client& inner) {
    auto c = std::make_unique<faults::FaultyClient>(inner, 1);
    api = c.get();
    return std::unique_ptr<client::Client>(std::move(c));
  };
  o.wrap_images = [&registries](kubelet::ImagePuller& inner) {
    auto r = std::make_unique<faults::SlowRegistry>(inner);
    registries.push_back(r.get());
    return std::unique_ptr<kubelet::ImagePuller>(std::move(r));
  };
  cluster::Cluster c(o);
  REQUIRE(c.Start().ok());
  REQUIRE(api != nullptr);
  REQUIRE(registries.size() == 1);
  registries[0]->SetDelay("docker.io/library/busybox:*", 1min);
  REQUIRE(c.client().Create(api::Pods(), "default", Pod("p", "work")).ok());
  c.Step(30s);
  CHECK(PodPhase(c.client(), "p") == "Pending");  // still pulling
  c.Step(40s);
  CHECK(PodPhase(c.client(), "p") == "Running");
  // A fresh kubelet after a power cycle gets a fresh image cache and wrapper.
  REQUIRE(c.SetNodePower("pjemu-node", false).ok());
  REQUIRE(c.SetNodePower("pjemu-node", true).ok());
  CHECK(registries.size() == 2);
}

}  // namespace
}  // namespace pjemu
