// Given real processes (pjemu-test-program), the POSIX runner should capture their output in
// CRI logs, report exit codes and signals on the EventLoop, and enforce memory limits.
#include "emulator/process/posix_process_runner.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "emulator/process/proc_stats.h"

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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempLog(const std::string& name) {
  std::string path = std::string(PJEMU_BINARY_DIR) + "/posix_runner_" + name + ".log";
  std::remove(path.c_str());
  return path;
}

struct Harness {
  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  std::optional<ProcessExit> exit;

  Pid Run(std::vector<std::string> args, std::string log = "", std::int64_t mem = 0) {
    args.insert(args.begin(), PJEMU_TEST_PROGRAM);
    ProcessSpec spec = Spec(args, log, mem);
    spec.env = {"GREETING=hi"};
    auto pid = runner.Start(spec, [this](const ProcessExit& e) { exit = e; });
    REQUIRE(pid.ok());
    return *pid;
  }
  bool WaitExit(Duration max = 10s) {
    return loop.RunUntil([this] { return exit.has_value(); }, max);
  }
};

TEST_CASE("posix runner reports the exit code and captures both streams", "[process]") {
  Harness h;
  std::string log = TempLog("streams");
  h.Run({"--print", "hello", "--stderr", "bad", "--print-env", "GREETING", "--exit", "3"}, log);
  REQUIRE(h.WaitExit());
  CHECK(h.exit->exit_code == 3);
  CHECK(h.exit->signal == 0);
  std::string text = ReadAll(log);
  CHECK(text.find(" stdout F hello\n") != std::string::npos);
  CHECK(text.find(" stderr F bad\n") != std::string::npos);
  CHECK(text.find(" stdout F GREETING=hi\n") != std::string::npos);
  // Every line starts with an RFC 3339 nanosecond timestamp.
  CHECK(text.substr(0, 2) == "20");
  CHECK(text.substr(19, 1) == ".");
  CHECK(text.substr(29, 2) == "Z ");
}

TEST_CASE("posix runner maps a signal to 128 + n", "[process]") {
  Harness h;
  Pid pid = h.Run({"--sleep-ms", "20000"});
  REQUIRE(h.runner.Signal(pid, SIGTERM).ok());
  REQUIRE(h.WaitExit());
  CHECK(h.exit->signal == SIGTERM);
  CHECK(h.exit->exit_code == 143);
  CHECK(h.runner.Signal(pid, SIGTERM).code() == Code::kNotFound);
}

TEST_CASE("posix runner: a process ignoring SIGTERM survives it until SIGKILL", "[process]") {
  Harness h;
  std::string log = TempLog("ignore");
  Pid pid = h.Run({"--ignore-sigterm", "--print", "ready", "--sleep-ms", "20000"}, log);
  // "ready" is printed after the handler is set: a signal sent earlier would find the default.
  REQUIRE(h.loop.RunUntil(
      [&] { return ReadAll(log).find(" stdout F ready\n") != std::string::npos; }, 10s));
  REQUIRE(h.runner.Signal(pid, SIGTERM).ok());
  CHECK_FALSE(h.WaitExit(500ms));
  REQUIRE(h.runner.Signal(pid, SIGKILL).ok());
  REQUIRE(h.WaitExit());
  CHECK(h.exit->exit_code == 137);
  CHECK_FALSE(h.exit->oom_killed);
}

TEST_CASE("posix runner kills a process group over its memory limit as OOMKilled", "[process]") {
  Harness h;
  h.Run({"--alloc-mb", "200", "--sleep-ms", "20000"}, "", 64 << 20);
  REQUIRE(h.WaitExit());
  CHECK(h.exit->oom_killed);
  CHECK(h.exit->exit_code == 137);
}

TEST_CASE("posix runner rejects a missing program before forking", "[process]") {
  Harness h;
  auto pid = h.runner.Start(Spec({"pjemu-no-such-program"}), nullptr);
  REQUIRE_FALSE(pid.ok());
  CHECK(pid.status().code() == Code::kNotFound);
  CHECK(pid.status().message() ==
        "exec: \"pjemu-no-such-program\": executable file not found in $PATH");
  auto dir = h.runner.Start(Spec({"/bin/true"}, "", 0, "/no/such/dir"), nullptr);
  CHECK(dir.status().code() == Code::kInvalid);
}

TEST_CASE("posix runner runs in the working directory, in its own process group", "[process]") {
  Harness h;
  std::string log = TempLog("cwd");
  auto pid =
      h.runner.Start(Spec({PJEMU_TEST_PROGRAM, "--print-cwd", "--sleep-ms", "300"}, log, 0, "/tmp"),
                     [&](const ProcessExit& e) { h.exit = e; });
  REQUIRE(pid.ok());
  CHECK(getpgid(*pid) == *pid);
  REQUIRE(h.WaitExit());
  CHECK(ReadAll(log).find(" stdout F /tmp\n") != std::string::npos);
}

TEST_CASE("posix runner kills the rest of the group when the main process exits", "[process]") {
  Harness h;
  std::string log = TempLog("group");
  Pid pid = h.Run({"--fork-child", "--sleep-ms", "200", "--exit", "0"}, log);
  REQUIRE(h.WaitExit());
  CHECK(h.exit->exit_code == 0);
  // The forked grandchild went with its container.
  h.loop.RunUntil([&] { return GroupMembers(pid).empty(); }, 2s);
  CHECK(GroupMembers(pid).empty());
}

}  // namespace
}  // namespace pjemu::process
