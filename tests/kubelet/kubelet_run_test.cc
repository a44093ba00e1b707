// Given pods bound to the node, the kubelet should run them as real processes and report
// phases, exit codes, reasons, restarts, init order, logs and env the way a kubelet does.
#include <catch2/catch.hpp>

#include "node_fixture.h"

namespace pjemu::kubelet {
namespace {

TEST_CASE("a pod runs to Succeeded and its output lands in a CRI log", "[kubelet][process]") {
  NodeFixture f;
  f.Create(TestPod("hello", {TestContainer("main", {"--print", "hello", "--stderr", "oops"})}));
  REQUIRE(f.WaitPhase("hello", "Succeeded"));
  Json pod = f.Get("hello");
  CHECK(pod["spec"]["nodeName"] == "pjemu-node");
  CHECK(pod["status"]["podIP"].get<std::string>().rfind("127.42.", 0) == 0);
  CHECK(pod["status"]["hostIP"] == "127.0.0.1");
  CHECK(pod["status"].contains("startTime"));
  CHECK(pod["status"]["qosClass"] == "BestEffort");
  Json c = f.Status("hello", "main");
  CHECK(c["state"]["terminated"]["exitCode"] == 0);
  CHECK(c["state"]["terminated"]["reason"] == "Completed");
  CHECK(c["imageID"] == "pjemu://docker.io/library/busybox:latest");
  CHECK(c["ready"] == false);
  bool scheduled = false;
  for (const Json& cond : pod["status"]["conditions"]) {
    if (cond["type"] == "PodScheduled") scheduled = cond["status"] == "True";
    if (cond["type"] == "Ready") CHECK(cond["reason"] == "PodCompleted");
  }
  CHECK(scheduled);
  auto log = f.kubelet->Find({"default", "hello", "", false});
  REQUIRE(log.ok());
  CHECK_FALSE(log->running);
  std::string text = ReadFile(log->path);
  CHECK(text.find(" stdout F hello\n") != std::string::npos);
  CHECK(text.find(" stderr F oops\n") != std::string::npos);
  auto reasons = f.EventReasons("hello");
  for (const char* r : {"Scheduled", "Created", "Started"}) {
    CHECK(std::count(reasons.begin(), reasons.end(), r) == 1);
  }
}

TEST_CASE("a failing container fails a Never pod with its exit code", "[kubelet][process]") {
  NodeFixture f;
  f.Create(TestPod("fail", {TestContainer("main", {"--exit", "3"})}));
  REQUIRE(f.WaitPhase("fail", "Failed"));
  Json c = f.Status("fail", "main");
  CHECK(c["state"]["terminated"]["exitCode"] == 3);
  CHECK(c["state"]["terminated"]["reason"] == "Error");
  CHECK(c["restartCount"] == 0);
}

TEST_CASE("OnFailure restarts in place with CrashLoopBackOff", "[kubelet][process]") {
  NodeFixture f;  // backoff_scale 0.01: restarts after 0, 100 ms, 200 ms, ...
  f.Create(TestPod("crash", {TestContainer("main", {"--print", "attempt", "--exit", "1"})},
                   "OnFailure"));
  bool saw_backoff = false;
  REQUIRE(f.Wait([&] {
    Json c = f.Status("crash", "main");
    if (c.is_null()) return false;
    if (c["state"].contains("waiting") && c["state"]["waiting"]["reason"] == "CrashLoopBackOff") {
      saw_backoff = true;
      CHECK(c["state"]["waiting"]["message"].get<std::string>().rfind("back-off ", 0) == 0);
    }
    return c["restartCount"].get<int>() >= 3;
  }));
  CHECK(saw_backoff);
  CHECK(f.Phase("crash") == "Running");
  Json c = f.Status("crash", "main");
  CHECK(c["lastState"]["terminated"]["exitCode"] == 1);
  CHECK(c["lastState"]["terminated"]["reason"] == "Error");
  auto prev = f.kubelet->Find({"default", "crash", "main", true});
  REQUIRE(prev.ok());
  CHECK(ReadFile(prev->path).find(" stdout F attempt\n") != std::string::npos);
  auto reasons = f.EventReasons("crash");
  CHECK(std::count(reasons.begin(), reasons.end(), "BackOff") >= 1);
}

TEST_CASE("OnFailure does not restart a container that succeeded", "[kubelet][process]") {
  NodeFixture f;
  f.Create(TestPod("once", {TestContainer("main", {"--exit", "0"})}, "OnFailure"));
  REQUIRE(f.WaitPhase("once", "Succeeded"));
  CHECK(f.Status("once", "main")["restartCount"] == 0);
}

TEST_CASE("init containers run in order before the containers", "[kubelet][process]") {
  NodeFixture f;
  std::string order = f.root + "/order.txt";
  Json pod = TestPod("init", {TestContainer("main", {"--append", order, "main"})});
  pod["spec"]["initContainers"] = {
      TestContainer("first", {"--sleep-ms", "200", "--append", order, "first"}),
      TestContainer("second", {"--append", order, "second"})};
  f.Create(pod);
  REQUIRE(f.WaitPhase("init", "Succeeded"));
  CHECK(ReadFile(order) == "first\nsecond\nmain\n");
  CHECK(f.Status("init", "first", true)["state"]["terminated"]["reason"] == "Completed");
}

TEST_CASE("a failed init container fails a Never pod and nothing else starts",
          "[kubelet][process]") {
  NodeFixture f;
  std::string order = f.root + "/order.txt";
  Json pod = TestPod("badinit", {TestContainer("main", {"--append", order, "main"})});
  pod["spec"]["initContainers"] = Json::array({TestContainer("first", {"--exit", "7"})});
  f.Create(pod);
  REQUIRE(f.WaitPhase("badinit", "Failed"));
  CHECK(f.Status("badinit", "first", true)["state"]["terminated"]["exitCode"] == 7);
  CHECK(f.Status("badinit", "main")["state"]["waiting"]["reason"] == "PodInitializing");
  CHECK(ReadFile(order).empty());
}

TEST_CASE("a container over its memory limit is OOMKilled", "[kubelet][process]") {
  NodeFixture f;
  Json c = TestContainer("hog", {"--alloc-mb", "256", "--sleep-ms", "20000"});
  c["resources"] = {{"limits", {{"memory", "64Mi"}}}};
  f.Create(TestPod("oom", {c}));
  REQUIRE(f.WaitPhase("oom", "Failed"));
  Json s = f.Status("oom", "hog");
  CHECK(s["state"]["terminated"]["reason"] == "OOMKilled");
  CHECK(s["state"]["terminated"]["exitCode"] == 137);
}

TEST_CASE("a missing program is ContainerCannotRun", "[kubelet][process]") {
  NodeFixture f;
  Json c = {{"name", "main"}, {"image", "busybox"}, {"command", {"pjemu-no-such-program"}}};
  f.Create(TestPod("norun", {c}));
  REQUIRE(f.WaitPhase("norun", "Failed"));
  Json s = f.Status("norun", "main");
  CHECK(s["state"]["terminated"]["reason"] == "ContainerCannotRun");
  CHECK(s["state"]["terminated"]["exitCode"] == 127);
  CHECK(s["state"]["terminated"]["message"] ==
        "exec: \"pjemu-no-such-program\": executable file not found in $PATH");
}

TEST_CASE("env, $(VAR) expansion, workingDir and OMP_NUM_THREADS reach the process",
          "[kubelet][process]") {
  NodeFixture f;
  Json c =
      TestContainer("main", {"--print-cwd", "--print-env", "B", "--print-env", "OMP_NUM_THREADS",
                             "--print-env", "HOSTNAME", "--print-args", "$(B)", "$$(B)"});
  c["env"] = {{{"name", "A"}, {"value", "x"}}, {{"name", "B"}, {"value", "$(A)-y"}}};
  c["workingDir"] = "/tmp";
  c["resources"] = {{"limits", {{"cpu", "1500m"}}}};
  f.Create(TestPod("env", {c}));
  REQUIRE(f.WaitPhase("env", "Succeeded"));
  auto log = f.kubelet->Find({"default", "env", "main", false});
  REQUIRE(log.ok());
  std::string text = ReadFile(log->path);
  for (const char* line : {" stdout F /tmp\n", " stdout F B=x-y\n", " stdout F OMP_NUM_THREADS=2\n",
                           " stdout F HOSTNAME=env\n", " stdout F x-y\n", " stdout F $(B)\n"}) {
    CHECK(text.find(line) != std::string::npos);
  }
  CHECK(f.Get("env")["status"]["qosClass"] == "Burstable");
}

TEST_CASE("pods with GPUs see exactly their devices", "[kubelet][process]") {
  KubeletOptions opts;
  opts.gpus = 2;
  NodeFixture f(opts);
  Json c = TestContainer("main", {"--print-env", "CUDA_VISIBLE_DEVICES", "--print-env",
                                  "NVIDIA_VISIBLE_DEVICES", "--sleep-ms", "500"});
  c["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
  f.Create(TestPod("gpu-a", {c}));
  f.Create(TestPod("gpu-b", {c}));
  REQUIRE(f.WaitPhase("gpu-a", "Succeeded"));
  REQUIRE(f.WaitPhase("gpu-b", "Succeeded"));
  std::string a = ReadFile(f.kubelet->Find({"default", "gpu-a", "", false})->path);
  std::string b = ReadFile(f.kubelet->Find({"default", "gpu-b", "", false})->path);
  CHECK(a.find("CUDA_VISIBLE_DEVICES=0\n") != std::string::npos);
  CHECK(a.find("NVIDIA_VISIBLE_DEVICES=0\n") != std::string::npos);
  CHECK(b.find("CUDA_VISIBLE_DEVICES=1\n") != std::string::npos);
}

TEST_CASE("with GPU time-slicing two pods share GPU 0 and a third does not fit",
          "[kubelet][process][gpu]") {
  KubeletOptions opts;
  opts.gpus = 1;
  opts.gpu_sharing = 2;
  NodeFixture f(opts);
  auto node = f.client->Get(api::Nodes(), "", opts.node_name);
  REQUIRE(node.ok());
  CHECK((*node)["status"]["capacity"]["nvidia.com/gpu"] == "2");
  CHECK((*node)["status"]["allocatable"]["nvidia.com/gpu"] == "2");
  CHECK((*node)["metadata"]["labels"]["nvidia.com/gpu.replicas"] == "2");
  CHECK((*node)["metadata"]["labels"]["nvidia.com/gpu.sharing-strategy"] == "time-slicing");
  Json c = TestContainer("main", {"--print-env", "CUDA_VISIBLE_DEVICES", "--print-env",
                                  "NVIDIA_VISIBLE_DEVICES", "--sleep-ms", "1500"});
  c["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
  f.Create(TestPod("gpu-a", {c}));
  f.Create(TestPod("gpu-b", {c}));
  REQUIRE(f.WaitPhase("gpu-a", "Running"));
  REQUIRE(f.WaitPhase("gpu-b", "Running"));
  f.Create(TestPod("gpu-c", {c}));
  REQUIRE(f.Wait(
      [&] {
        for (const Json& cond : f.Get("gpu-c")["status"].value("conditions", Json::array())) {
          if (cond["type"] == "PodScheduled" && cond["status"] == "False") return true;
        }
        return false;
      },
      5s));
  CHECK(f.Get("gpu-c")["status"]["conditions"][0]["message"] ==
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
  REQUIRE(f.WaitPhase("gpu-a", "Succeeded"));
  REQUIRE(f.WaitPhase("gpu-b", "Succeeded"));
  for (const char* pod : {"gpu-a", "gpu-b"}) {
    std::string log = ReadFile(f.kubelet->Find({"default", pod, "", false})->path);
    INFO(pod << ": " << log);
    CHECK(log.find("CUDA_VISIBLE_DEVICES=0\n") != std::string::npos);
    CHECK(log.find("NVIDIA_VISIBLE_DEVICES=0\n") != std::string::npos);
  }
}

TEST_CASE("image errors leave the pod Pending with the kubelet's reasons", "[kubelet][process]") {
  NodeFixture f;
  f.Create(TestPod("badref", {{{"name", "c"}, {"image", "<training image>"}}}));
  f.Create(TestPod("unmapped", {{{"name", "c"}, {"image", "example.com/unmapped:1"}}}));
  REQUIRE(f.Wait([&] {
    return !f.Status("badref", "c").is_null() &&
           f.Status("badref", "c")["state"].contains("waiting") &&
           f.Status("badref", "c")["state"]["waiting"]["reason"] == "InvalidImageName";
  }));
  REQUIRE(f.Wait([&] {
    return !f.Status("unmapped", "c").is_null() &&
           f.Status("unmapped", "c")["state"]["waiting"].value("reason", "") == "ErrImagePull";
  }));
  CHECK(f.Phase("badref") == "Pending");
  CHECK(f.Phase("unmapped") == "Pending");
  CHECK(f.Status("badref", "c")["state"]["waiting"]["message"] ==
        "Failed to apply default image tag \"<training image>\": couldn't parse image reference "
        "\"<training image>\": invalid reference format");
  auto log = f.kubelet->Find({"default", "badref", "", false});
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().message() ==
        "container \"c\" in pod \"badref\" is waiting to start: InvalidImageName");
}

}  // namespace
}  // namespace pjemu::kubelet
