#include "emulator/process/resource_sampler.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <ctime>

namespace pjemu::process {
namespace {

// Burns `ms` of CPU time in this process (CPU time, not wall time: the machine may be busy).
void Spin(int ms) {
  std::clock_t until = std::clock() + static_cast<std::clock_t>(ms) * CLOCKS_PER_SEC / 1000;
  volatile double x = 1;
  while (std::clock() < until) x = x * 1.0000001 + 1e-9;
}

TEST_CASE("resource sampler: CPU and RSS of a process group over time, per container") {
  FakeClock clock;
  // This test process, in a group of its own (under ctest -j it would share ctest's group with
  // the other tests running, whose CPU would count too), stands in for a container.
  setpgid(0, 0);
  pid_t group = getpgrp();
  std::vector<std::pair<Pid, std::string>> live = {{group, "kubeflow/job-master-0/pytorch"}};
  ResourceSamplerOptions options;
  options.max_samples = 3;
  ResourceSampler sampler(
      clock, [&] { return live; }, options);

  sampler.SampleOnce();
  Spin(300);
  clock.Advance(std::chrono::seconds(1));
  sampler.SampleOnce();

  auto samples = sampler.Samples("kubeflow/job-master-0/");
  REQUIRE(samples.size() == 1);
  const auto& series = samples.at("pytorch");
  REQUIRE(series.size() == 2);
  CHECK(series[0].cpu_cores == 0);  // no previous sample to compare with
  // ~0.3 s of CPU in 1 s of (fake) wall time; clock ticks are 10 ms.
  CHECK(series[1].cpu_cores > 0.1);
  CHECK(series[1].cpu_cores < 5);
  CHECK(series[1].memory_bytes > 1024 * 1024);
  CHECK(series[1].pid == group);
  CHECK(series[1].time - series[0].time == std::chrono::seconds(1));

  CHECK(sampler.Samples("kubeflow/job-master-").size() == 1);
  CHECK(sampler.Samples("kubeflow/job-worker-0/").empty());

  SECTION("history is bounded") {
    for (int i = 0; i < 5; ++i) {
      clock.Advance(std::chrono::seconds(1));
      sampler.SampleOnce();
    }
    CHECK(sampler.Samples("kubeflow/").at("job-master-0/pytorch").size() == 3);
  }
  SECTION("a restarted container (new pid) starts its CPU rate afresh") {
    pid_t child = fork();
    if (child == 0) {
      setpgid(0, 0);
      pause();
      _exit(0);
    }
    REQUIRE(child > 0);
    setpgid(child, child);
    live = {{child, "kubeflow/job-master-0/pytorch"}};
    clock.Advance(std::chrono::seconds(1));
    sampler.SampleOnce();
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    // A copy: Samples() returns a temporary map (a reference into it was a use-after-free).
    auto after = sampler.Samples("kubeflow/").at("job-master-0/pytorch");
    REQUIRE(after.size() == 3);
    CHECK(after[2].pid == child);
    CHECK(after[2].cpu_cores == 0);
  }
  SECTION("a group that is gone is skipped") {
    live = {{999999999, "kubeflow/gone/c"}};
    sampler.SampleOnce();
    CHECK(sampler.Samples("kubeflow/gone/").empty());
  }
}

TEST_CASE("resource sampler: the number of containers kept is bounded") {
  FakeClock clock;
  pid_t group = getpgrp();
  std::vector<std::pair<Pid, std::string>> live;
  ResourceSamplerOptions options;
  options.max_containers = 2;
  ResourceSampler sampler(
      clock, [&] { return live; }, options);
  for (const char* name : {"ns/a/c", "ns/b/c", "ns/c/c"}) {
    live = {{group, name}};
    sampler.SampleOnce();
    clock.Advance(std::chrono::seconds(1));
  }
  auto all = sampler.Samples("ns/");
  CHECK(all.size() == 2);
  CHECK(all.count("a/c") == 0);  // the least recently sampled went first
}

}  // namespace
}  // namespace pjemu::process

namespace pjemu::process {
namespace {

TEST_CASE("resource sampler: GPU figures of a container's pids, only with a GPU source") {
  FakeClock clock;
  setpgid(0, 0);
  const pid_t group = getpgrp();
  std::vector<std::pair<Pid, std::string>> live = {{group, "kubeflow/job-master-0/pytorch"}};
  ResourceSampler without(clock, [&] { return live; });
  without.SampleOnce();
  auto none = without.Samples("kubeflow/").at("job-master-0/pytorch");
  REQUIRE(none.size() == 1);
  CHECK(none[0].gpu_memory_bytes == -1);  // no NVML: no GPU figures at all
  CHECK(none[0].gpu_util_percent == -1);

  ResourceSamplerOptions options;
  std::map<Pid, GpuProcessUse> gpu = {
      {getpid(), {512LL << 20, 40}},  // a member of the container's group
      {1, {1LL << 30, 99}},           // init: in no listed group, not counted
  };
  options.gpu = [&] { return gpu; };
  ResourceSampler with(
      clock, [&] { return live; }, options);
  with.SampleOnce();
  gpu.erase(getpid());  // the process released the GPU: 0, not "no figure"
  clock.Advance(std::chrono::seconds(1));
  with.SampleOnce();
  auto series = with.Samples("kubeflow/").at("job-master-0/pytorch");
  REQUIRE(series.size() == 2);
  CHECK(series[0].gpu_memory_bytes == 512LL << 20);
  CHECK(series[0].gpu_util_percent == 40);
  CHECK(series[1].gpu_memory_bytes == 0);
  CHECK(series[1].gpu_util_percent == 0);
}

TEST_CASE("NVML absent: no GPU source at all") {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) {
    dlclose(lib);
    WARN("this machine has NVIDIA's driver library: nothing to check");
    return;
  }
  CHECK(NvmlGpuUsage::Open() == nullptr);
}

}  // namespace
}  // namespace pjemu::process
