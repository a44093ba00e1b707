// Given cgroups (cgroups.h), PosixProcessRunner should put each process in a cgroup of its own
// whose limits the kernel enforces: an allocation past the memory limit is stopped at the limit
// and the process ends OOMKilled (exit 137) from the cgroup's oom_kill counter, one under it
// runs on; a CPU limit throttles a busy loop to the quota; the usage figures (CPU time, working
// set) come from the cgroup, also through ResourceSampler::Latest; the cgroup goes when its
// process has. The shares and weight conversions are the kubelet's.
// The runner cases are skipped (with the reason) where the host gives no cgroups (not root).
#include "emulator/process/cgroups.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "emulator/process/posix_process_runner.h"
#include "emulator/process/resource_sampler.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_CGROUPS(runner)                            \
  do {                                                          \
    if (!(runner).cgroups_status().ok()) {                      \
      WARN("skipped: " << (runner).cgroups_status().message()); \
      return;                                                   \
    }                                                           \
  } while (false)

struct Harness {
  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  std::optional<ProcessExit> exit;

  Result<Pid> Start(std::vector<std::string> argv, std::int64_t memory = 0,
                    std::int64_t cpu_limit = 0) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.memory_limit_bytes = memory;
    spec.cpu_limit_millis = cpu_limit;
    spec.name = "default/pod/ctr";
    exit.reset();
    return runner.Start(spec, [this](const ProcessExit& e) { exit = e; });
  }
  bool Wait(Duration d = 20s) {
    return loop.RunUntil([this] { return exit.has_value(); }, d);
  }
};

TEST_CASE("cgroups: the kubelet's CPU shares and weights", "[process][cgroups]") {
  CHECK(CpuShares(0) == 2);  // BestEffort
  CHECK(CpuShares(1) == 2);
  CHECK(CpuShares(100) == 102);
  CHECK(CpuShares(1000) == 1024);
  CHECK(CpuShares(500000) == 262144);
  CHECK(CpuWeight(2) == 1);
  CHECK(CpuWeight(1024) == 39);
  CHECK(CpuWeight(262144) == 10000);
}

TEST_CASE("cgroups: past the memory limit the kernel stops it: OOMKilled, exit 137",
          "[process][cgroups]") {
  Harness h;
  SKIP_WITHOUT_CGROUPS(h.runner);
  auto pid = h.Start({PJEMU_TEST_PROGRAM, "--alloc-mb", "256", "--sleep-ms", "5000"}, 64 << 20);
  REQUIRE(pid.ok());
  REQUIRE(h.Wait());
  CHECK(h.exit->oom_killed);
  CHECK(h.exit->signal == SIGKILL);
  CHECK(h.exit->exit_code == 137);
}

TEST_CASE("cgroups: under the memory limit it runs on, its working set counted",
          "[process][cgroups]") {
  Harness h;
  SKIP_WITHOUT_CGROUPS(h.runner);
  auto pid = h.Start({PJEMU_TEST_PROGRAM, "--alloc-mb", "32", "--sleep-ms", "1500"}, 128 << 20);
  REQUIRE(pid.ok());
  std::optional<CgroupUsage> usage;
  for (int i = 0; i < 100; ++i) {
    h.loop.RunUntil([] { return false; }, 20ms);
    usage = h.runner.CgroupUsageOf(*pid);
    if (usage && usage->working_set_bytes >= (32 << 20)) break;
  }
  REQUIRE(usage.has_value());
  CHECK(usage->working_set_bytes >= (32 << 20));
  CHECK(usage->working_set_bytes < (128 << 20));
  REQUIRE(h.Wait());
  CHECK_FALSE(h.exit->oom_killed);
  CHECK(h.exit->exit_code == 0);
}

TEST_CASE("cgroups: a CPU limit throttles a busy loop to its quota", "[process][cgroups]") {
  Harness h;
  SKIP_WITHOUT_CGROUPS(h.runner);
  auto pid = h.Start({"/bin/sh", "-c", "while :; do :; done"}, 0, 200);
  REQUIRE(pid.ok());
  h.loop.RunUntil([] { return false; }, 300ms);
  auto before = h.runner.CgroupUsageOf(*pid);
  auto t0 = std::chrono::steady_clock::now();
  h.loop.RunUntil([] { return false; }, 1500ms);
  auto after = h.runner.CgroupUsageOf(*pid);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(before.has_value());
  REQUIRE(after.has_value());
  double cores = static_cast<double>(after->cpu_usage_ns - before->cpu_usage_ns) / 1e9 / wall;
  INFO("cores used under a 200m limit: " << cores);
  CHECK(cores > 0.05);  // it runs (the machine may be busy)
  CHECK(cores < 0.26);  // but never past its quota (plus one period's slack)
  CHECK(after->throttled_periods > 0);
  REQUIRE(h.runner.Signal(*pid, SIGKILL).ok());
  REQUIRE(h.Wait());
}

TEST_CASE("cgroups: the sampler reads the cgroup, the cgroup goes with its process",
          "[process][cgroups]") {
  Harness h;
  SKIP_WITHOUT_CGROUPS(h.runner);
  auto pid = h.Start({"/bin/sh", "-c", "while :; do :; done"}, 0, 500);
  REQUIRE(pid.ok());
  ResourceSamplerOptions options;
  options.interval = 200ms;
  ResourceSampler sampler(
      h.clock, [&] { return h.runner.Live(); }, options,
      [&](Pid p) { return h.runner.CgroupUsageOf(p); });
  sampler.SampleOnce();
  h.loop.RunUntil([] { return false; }, 1s);
  sampler.SampleOnce();
  auto latest = sampler.Latest("default/pod/");
  REQUIRE(latest.count("ctr") == 1);
  CHECK(latest["ctr"].from_cgroup);
  CHECK(latest["ctr"].memory_bytes > 0);
  CHECK(latest["ctr"].cpu_cores > 0.05);
  // A 500m quota is 50 ms of each 100 ms CFS period; a 1 s window can hold one more period's
  // quota at its edges: at most 0.5 * (1 + 100/1000). An unlimited loop reads about 1.
  CHECK(latest["ctr"].cpu_cores < 0.65);
  CHECK(sampler.Latest("other/pod/").empty());
  // The cgroup's directory, found through the process's own /proc/PID/cgroup.
  std::string memory_path;
  {
    std::ifstream in("/proc/" + std::to_string(*pid) + "/cgroup");
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(":memory:") != std::string::npos)
        memory_path = line.substr(line.find(":/") + 1);
    }
  }
  REQUIRE(h.runner.Signal(*pid, SIGKILL).ok());
  REQUIRE(h.Wait());
  if (!memory_path.empty()) {
    fs::path dir = fs::path("/sys/fs/cgroup/memory") / memory_path.substr(1);
    for (int i = 0; i < 100 && fs::exists(dir); ++i) {
      h.loop.RunUntil([] { return false; }, 20ms);
    }
    CHECK_FALSE(fs::exists(dir));
  }
}

}  // namespace
}  // namespace pjemu::process
