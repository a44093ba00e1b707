// Given a harness process that runs a PosixProcessRunner with a sleeping process that forked a
// child, SIGKILLing the harness should leave no process behind (OrphanGuard + PDEATHSIG).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "emulator/process/posix_process_runner.h"
#include "emulator/process/proc_stats.h"
#include "tests/process/pid_pipe.h"

namespace pjemu::process {
namespace {

ProcessSpec Spec(std::vector<std::string> argv, std::string log = "", std::int64_t mem = 0,
                 std::string dir = "") {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.log_path = std::move(log);
  spec.memory_limit_bytes = mem;
  spec.working_dir = std::move(dir);
  return spec;
}

bool Alive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

TEST_CASE("no process survives the emulator being SIGKILLed", "[process][orphans]") {
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  pid_t harness = fork();
  REQUIRE(harness >= 0);
  if (harness == 0) {
    close(fds[0]);
    RealClock clock;
    EventLoop loop(clock);
    PosixProcessRunner runner(loop);
    auto pid =
        runner.Start(Spec({PJEMU_TEST_PROGRAM, "--fork-child", "--sleep-ms", "60000"}), nullptr);
    if (!pid.ok()) _exit(1);
    // Wait until the grandchild exists, then report the whole group.
    for (int i = 0; i < 200 && GroupMembers(*pid).size() < 2; ++i) {
      loop.RunUntil([] { return false; }, 10ms);
    }
    std::string msg;
    for (pid_t p : GroupMembers(*pid)) msg += std::to_string(p) + "\n";
    (void)!write(fds[1], msg.data(), msg.size());
    close(fds[1]);
    loop.RunUntil([] { return false; }, 60s);
    _exit(0);
  }
  close(fds[1]);
  std::vector<pid_t> pids = testing::ReadPids(fds[0]);
  REQUIRE(pids.size() == 2);
  for (pid_t p : pids) CHECK(Alive(p));
  kill(harness, SIGKILL);
  waitpid(harness, nullptr, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto any_alive = [&] {
    for (pid_t p : pids) {
      if (Alive(p)) return true;
    }
    return false;
  };
  while (any_alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : pids) CHECK_FALSE(Alive(p));
}

}  // namespace
}  // namespace pjemu::process
