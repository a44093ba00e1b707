// A one-node cluster for the kubelet and scheduler tests: Store, LocalClient, Scheduler and a
// Kubelet over a PosixProcessRunner, on an EventLoop in real time (RealClock) with bounded
// waits. Pods run pjemu-test-program through the image map's `busybox` entry.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

#include "emulator/client/local_client.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::kubelet {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A container running the test program with the given flags.
inline Json TestContainer(const std::string& name, std::vector<std::string> flags) {
  flags.insert(flags.begin(), PJEMU_TEST_PROGRAM);
  return {{"name", name}, {"image", "busybox"}, {"command", flags}};
}

// `containers` is a vector, not a Json: `TestPod("p", {c})` with a Json parameter is the array
// [c] under GCC but a copy of c (an object) under clang (CWG 2137), which the clang ASan build met.
inline Json TestPod(const std::string& name, std::vector<Json> containers,
                    const std::string& policy = "Never") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"restartPolicy", policy}, {"containers", Json(std::move(containers))}}}};
}

struct NodeFixture {
  explicit NodeFixture(KubeletOptions opts = {}, const std::string& root_name = "kubelet") {
    // One folder per test process: ctest runs cases of this binary in parallel.
    root = std::string(PJEMU_BINARY_DIR) + "/test-" + root_name + "-" + std::to_string(getpid());
    std::filesystem::remove_all(root);
    opts.root_dir = root;
    opts.image_map_path = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
    if (opts.backoff_scale == 1.0) opts.backoff_scale = 0.01;
    if (!opts.gpus) opts.gpus = 0;
    if (opts.cpu.empty()) opts.cpu = "8";
    if (opts.memory.empty()) opts.memory = "16Gi";
    opts.service_poll_interval = 100ms;
    // Each pod parked after every task that read it (warm_pods.h): the path a busy node takes,
    // so every kubelet test also checks that nothing is lost in a pod's trip through its packed
    // form. The cluster tests keep the default (a node of few pods never parks).
    if (opts.warm_pods == KubeletOptions{}.warm_pods) opts.warm_pods = 0;
    // Tests write to host paths; only the tests about the container filesystem ask for kOn.
    if (opts.sandbox == KubeletOptions::Sandbox::kAuto) {
      opts.sandbox = KubeletOptions::Sandbox::kOff;
    }
    kubelet = std::make_unique<Kubelet>(*client, loop, runner, opts);
    REQUIRE(scheduler.Start().ok());
    auto s = kubelet->Start();
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  ~NodeFixture() {
    kubelet->Stop();
    scheduler.Stop();
    loop.RunUntil([&] { return runner.running() == 0; }, 5s);
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }

  Json Create(Json pod, const std::string& ns = "default") {
    auto r = client->Create(api::Pods(), ns, std::move(pod));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }
  Json Get(const std::string& name, const std::string& ns = "default") {
    auto r = client->Get(api::Pods(), ns, name);
    return r.ok() ? *r : Json();
  }
  std::string Phase(const std::string& name, const std::string& ns = "default") {
    Json p = Get(name, ns);
    return p.is_null() ? "<gone>" : p.value("status", Json::object()).value("phase", "");
  }
  bool WaitPhase(const std::string& name, const std::string& phase, Duration max = 10s,
                 const std::string& ns = "default") {
    return loop.RunUntil([&] { return Phase(name, ns) == phase; }, max);
  }
  bool Wait(const std::function<bool()>& pred, Duration max = 10s) {
    return loop.RunUntil(pred, max);
  }
  // status.containerStatuses[] (or initContainerStatuses[]) entry of a container.
  Json Status(const std::string& pod, const std::string& container, bool init = false,
              const std::string& ns = "default") {
    Json p = Get(pod, ns);
    if (p.is_null()) return Json();
    for (const Json& c :
         p["status"].value(init ? "initContainerStatuses" : "containerStatuses", Json::array())) {
      if (c.value("name", "") == container) return c;
    }
    return Json();
  }
  std::vector<std::string> EventReasons(const std::string& pod) {
    std::vector<std::string> out;
    auto list = client->List(api::Events(), "");
    if (!list.ok()) return out;
    for (const Json& e : (*list)["items"]) {
      if (e["involvedObject"].value("name", "") == pod) out.push_back(e.value("reason", ""));
    }
    return out;
  }

  std::string root;
  RealClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  process::PosixProcessRunner runner{loop};
  scheduler::Scheduler scheduler{*client, loop};
  std::unique_ptr<Kubelet> kubelet;
};

}  // namespace pjemu::kubelet
