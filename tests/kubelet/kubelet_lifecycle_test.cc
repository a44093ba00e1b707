// Given running pods, deletion should be graceful (SIGTERM, grace period, SIGKILL), nothing
// may outlive a SIGKILLed emulator, and two jobs declaring the same port must not collide.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "emulator/process/proc_stats.h"
#include "node_fixture.h"

namespace pjemu::kubelet {
namespace {

bool Alive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

std::vector<pid_t> Pids(const std::string& text) {
  std::vector<pid_t> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    out.push_back(std::stoi(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return out;
}

TEST_CASE("deleting a pod sends SIGTERM and deletes it once the process exits",
          "[kubelet][process]") {
  NodeFixture f;
  f.Create(TestPod("polite", {TestContainer("main", {"--sleep-ms", "60000"})}));
  REQUIRE(f.WaitPhase("polite", "Running"));
  auto del = f.client->Delete(api::Pods(), "default", "polite");  // grace 30 s by default
  REQUIRE(del.ok());
  CHECK((*del)["metadata"].contains("deletionTimestamp"));
  // The process dies of SIGTERM at once, far inside the 30 s grace period.
  REQUIRE(f.Wait([&] { return f.Get("polite").is_null(); }, 5s));
  auto reasons = f.EventReasons("polite");
  CHECK(reasons.empty());  // the pod's events go with it (store deviation)
}

TEST_CASE("a process ignoring SIGTERM is SIGKILLed after the grace period", "[kubelet][process]") {
  NodeFixture f;
  std::string pids = f.root + "/stubborn.pid";
  f.Create(TestPod("stubborn", {TestContainer("main", {"--ignore-sigterm", "--pid-file", pids,
                                                       "--sleep-ms", "60000"})}));
  REQUIRE(f.WaitPhase("stubborn", "Running"));
  REQUIRE(f.Wait([&] { return !ReadFile(pids).empty(); }, 5s));
  pid_t pid = Pids(ReadFile(pids)).at(0);
  api::DeleteOptions opts;
  opts.grace_period_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  REQUIRE(f.client->Delete(api::Pods(), "default", "stubborn", opts).ok());
  // Still there (SIGTERM ignored) half-way through the grace period.
  f.Wait([] { return false; }, 500ms);
  CHECK(Alive(pid));
  CHECK_FALSE(f.Get("stubborn").is_null());
  REQUIRE(f.Wait([&] { return f.Get("stubborn").is_null(); }, 5s));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(900));
  CHECK_FALSE(Alive(pid));
}

TEST_CASE("a pod asking for a GPU the node lacks is Unschedulable", "[scheduler][kubelet]") {
  NodeFixture f;
  Json c = TestContainer("main", {"--exit", "0"});
  c["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
  f.Create(TestPod("gpu", {c}));
  REQUIRE(f.Wait(
      [&] {
        for (const Json& cond : f.Get("gpu")["status"].value("conditions", Json::array())) {
          if (cond["type"] == "PodScheduled" && cond["status"] == "False") return true;
        }
        return false;
      },
      5s));
  Json pod = f.Get("gpu");
  CHECK(pod["status"]["phase"] == "Pending");
  CHECK_FALSE(pod["spec"].contains("nodeName"));
  Json cond = pod["status"]["conditions"][0];
  CHECK(cond["reason"] == "Unschedulable");
  CHECK(cond["message"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
  auto reasons = f.EventReasons("gpu");
  CHECK(std::count(reasons.begin(), reasons.end(), "FailedScheduling") == 1);
}

TEST_CASE("no pod process survives the emulator being SIGKILLed", "[kubelet][process][orphans]") {
  std::string dir =
      std::string(PJEMU_BINARY_DIR) + "/test-kubelet-orphans-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string pids = dir + "/pids";
  pid_t harness = fork();
  REQUIRE(harness >= 0);
  if (harness == 0) {
    {
      NodeFixture f({}, "orphans-harness");
      f.Create(TestPod("sleeper", {TestContainer("main", {"--pid-file", pids, "--fork-child",
                                                          "--sleep-ms", "60000"})}));
      f.Wait([] { return false; }, 60s);
    }
    _exit(0);
  }
  // Whatever happens below, the harness does not outlive the test.
  struct KillHarness {
    pid_t pid;
    ~KillHarness() {
      if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } guard{harness};
  // The pod's main process writes its pid; its forked child prints "child <pid>" to the log.
  std::vector<pid_t> all;
  // NodeFixture names its folder after the process that made it: the harness.
  const std::string harness_root =
      std::string(PJEMU_BINARY_DIR) + "/test-orphans-harness-" + std::to_string(harness);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    auto main_pids = Pids(ReadFile(pids));
    std::string logs;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(harness_root, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->path().extension() == ".log") logs += ReadFile(it->path());
    }
    auto child = logs.find("stdout F child ");
    if (!main_pids.empty() && child != std::string::npos) {
      all = {main_pids[0], std::stoi(logs.substr(child + 15))};
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(all.size() == 2);
  for (pid_t p : all) CHECK(Alive(p));
  kill(harness, SIGKILL);
  waitpid(harness, nullptr, 0);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto any = [&] { return Alive(all[0]) || Alive(all[1]); };
  while (any() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_FALSE(Alive(all[0]));
  CHECK_FALSE(Alive(all[1]));
}

// A headless Service <name> selecting pod <name> by label, port 23456 (the controller's shape).
Json MasterService(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"clusterIP", "None"},
            {"selector", {{"job", name}}},
            {"ports", {{{"name", "pytorchjob-port"}, {"port", 23456}, {"targetPort", 23456}}}}}}};
}

TEST_CASE("two jobs declaring port 23456 in two namespaces run side by side",
          "[kubelet][process][network]") {
  NodeFixture f;
  for (const char* ns : {"team-a", "team-b"}) {
    Json namespace_obj = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    (void)f.client->Create(api::Namespaces(), "", namespace_obj);
    REQUIRE(f.client->Create(api::Services(), ns, MasterService("job-master-0")).ok());
    Json c = TestContainer("pytorch", {"--print-env", "MASTER_ADDR", "--print-env", "MASTER_PORT",
                                       "--listen-env", "MASTER_PORT", "--sleep-ms", "1500"});
    c["env"] = {{{"name", "MASTER_ADDR"}, {"value", "job-master-0"}},
                {{"name", "MASTER_PORT"}, {"value", "23456"}}};
    Json pod = TestPod("job-master-0", {c});
    pod["metadata"]["labels"] = {{"job", "job-master-0"}};
    f.Create(pod, ns);
  }
  REQUIRE(f.WaitPhase("job-master-0", "Succeeded", 10s, "team-a"));
  REQUIRE(f.WaitPhase("job-master-0", "Succeeded", 10s, "team-b"));
  std::map<std::string, std::string> logs;
  for (const char* ns : {"team-a", "team-b"}) {
    auto log = f.kubelet->Find({ns, "job-master-0", "", false});
    REQUIRE(log.ok());
    logs[ns] = ReadFile(log->path);
    std::string ip = f.Get("job-master-0", ns)["status"]["podIP"];
    CHECK(logs[ns].find("MASTER_ADDR=" + ip + "\n") != std::string::npos);
    CHECK(logs[ns].find("listening on") != std::string::npos);
    CHECK(logs[ns].find("MASTER_PORT=23456\n") == std::string::npos);
  }
  // The stored spec still says what the controller wrote.
  CHECK(f.Get("job-master-0", "team-a")["spec"]["containers"][0]["env"][1]["value"] == "23456");
}

}  // namespace
}  // namespace pjemu::kubelet
