// Given ProcessSpec::own_pid_namespace (with a mount plan, whose fresh /proc shows it), the
// container's command should be PID 1 of a PID namespace of its own, as on a cluster: it sees
// only its own processes; a SIGTERM it has no handler for is ignored (Signal reaches it alone)
// while SIGKILL ends it; when it exits nothing it started survives, not even a process that left
// its process group; and an exec joins the namespace (its `ps` shows the container's processes,
// its `kill 1` reaches the container's PID 1, never the host's init).
// Given ProcessSpec::pid_namespace_of, the process should join that namespace (a pod's shared
// one under its pause process): not PID 1, seeing the other processes, a SIGTERM without a
// handler ending it, gone when the namespace's init goes.
// Skipped (with the probe's reason) where the sandbox or PID namespaces are unavailable.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "emulator/process/container_exec.h"
#include "emulator/process/exec_path.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/process/sandbox.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_PID_NAMESPACES()                        \
  do {                                                       \
    Status available = SandboxAvailable();                   \
    if (available.ok()) available = PidNamespaceAvailable(); \
    if (!available.ok()) {                                   \
      WARN("skipped: " << available.message());              \
      return;                                                \
    }                                                        \
  } while (false)

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFd(int fd) {
  std::string all;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  return all;
}

// The inode of a process's PID namespace (0 when it is gone).
ino_t PidNamespaceOf(const std::string& pid) {
  struct stat st {};
  return stat(("/proc/" + pid + "/ns/pid").c_str(), &st) == 0 ? st.st_ino : 0;
}

// Host processes in the PID namespace `ns`.
int ProcessesIn(ino_t ns) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") == std::string::npos && PidNamespaceOf(name) == ns) {
      ++n;
    }
  }
  return n;
}

struct Harness {
  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  std::optional<ProcessExit> exit;
  fs::path dir;
  fs::path log;

  explicit Harness(const std::string& name) {
    dir = fs::path(PJEMU_BINARY_DIR) / "pid_namespace_test" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    log = dir / "0.log";
  }
  // `pid_namespace_of`: join that process's namespace instead of making one.
  Result<Pid> Start(std::vector<std::string> argv, Pid pid_namespace_of = 0) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
    spec.log_path = log.string();
    spec.mounts.enabled = true;
    spec.mounts.root_upper = (dir / "root-upper").string();
    spec.mounts.root_work = (dir / "root-work").string();
    spec.mounts.root_merged = (dir / "root").string();
    spec.own_pid_namespace = pid_namespace_of == 0;
    spec.pid_namespace_of = pid_namespace_of;
    spec.name = "default/pod/ctr";
    return runner.Start(spec, [this](const ProcessExit& e) { exit = e; });
  }
  bool Wait(Duration d = 20s) {
    return loop.RunUntil([this] { return exit.has_value(); }, d);
  }
  void Run(Duration d) {
    loop.RunUntil([] { return false; }, d);
  }
  std::string Log() { return ReadFile(log); }
};

TEST_CASE("pid namespace: the command is PID 1 and sees only its own processes",
          "[process][sandbox][pidns]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("pid1");
  auto pid = h.Start({"/bin/sh", "-c", "echo pid=$$; ls /proc | grep -c '^[0-9]'"});
  REQUIRE(pid.ok());
  REQUIRE(h.Wait());
  CHECK(h.exit->exit_code == 0);
  std::string log = h.Log();
  CHECK(log.find("stdout F pid=1\n") != std::string::npos);
  // sh, ls and grep: never the host's hundreds.
  auto at = log.rfind("stdout F ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(log.substr(at + 9)) <= 4);
}

TEST_CASE("pid namespace: SIGTERM without a handler is ignored, SIGKILL ends it",
          "[process][sandbox][pidns]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("sigterm");
  auto pid = h.Start({"/bin/sleep", "60"});
  REQUIRE(pid.ok());
  REQUIRE(h.runner.Signal(*pid, SIGTERM).ok());
  h.Run(300ms);
  CHECK_FALSE(h.exit.has_value());
  REQUIRE(h.runner.Signal(*pid, SIGKILL).ok());
  REQUIRE(h.Wait());
  CHECK(h.exit->signal == SIGKILL);
  CHECK(h.exit->exit_code == 137);
}

TEST_CASE("pid namespace: a handler of its own still gets SIGTERM", "[process][sandbox][pidns]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("handler");
  auto pid = h.Start({"/bin/sh", "-c", "trap 'exit 143' TERM; while :; do sleep 0.05; done"});
  REQUIRE(pid.ok());
  h.Run(200ms);
  REQUIRE(h.runner.Signal(*pid, SIGTERM).ok());
  REQUIRE(h.Wait(10s));
  CHECK(h.exit->exit_code == 143);
}

TEST_CASE("pid namespace: nothing survives PID 1, not even a process in a session of its own",
          "[process][sandbox][pidns][orphans]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("orphans");
  auto pid = h.Start({"/bin/sh", "-c", "setsid sleep 600 & sleep 600 & sleep 0.3; exit 3"});
  REQUIRE(pid.ok());
  ino_t ns = PidNamespaceOf(std::to_string(*pid));
  REQUIRE(ns != 0);
  REQUIRE(ns != PidNamespaceOf("self"));
  h.Run(100ms);
  CHECK(ProcessesIn(ns) >= 2);
  REQUIRE(h.Wait());
  CHECK(h.exit->exit_code == 3);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (ProcessesIn(ns) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(ProcessesIn(ns) == 0);
}

TEST_CASE("pid namespace: an exec joins it, its kill 1 reaches the container's PID 1",
          "[process][sandbox][pidns][exec]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("exec");
  auto pid = h.Start({"/bin/sh", "-c", "trap 'exit 143' TERM; while :; do sleep 0.05; done"});
  REQUIRE(pid.ok());
  h.Run(100ms);
  ContainerExecSpec spec;
  spec.target = *pid;
  spec.enter_namespaces = true;
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.argv = {"sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '; echo; echo me=$$; kill 1"};
  auto p = StartInContainer(spec);
  REQUIRE(p.ok());
  std::string out = ReadFd((*p)->stdout_fd());
  CHECK((*p)->Wait() == 0);
  CHECK(out.find("/bin/sh -c trap") == 0);
  CHECK(out.find("me=1\n") == std::string::npos);
  REQUIRE(h.Wait(10s));
  CHECK(h.exit->exit_code == 143);
}

TEST_CASE("pid namespace: an exec's exit code and a kill pass through its namespace",
          "[process][sandbox][pidns][exec]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  Harness h("exec-exit");
  auto pid = h.Start({"/bin/sleep", "60"});
  REQUIRE(pid.ok());
  h.Run(100ms);
  ContainerExecSpec spec;
  spec.target = *pid;
  spec.enter_namespaces = true;
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.argv = {"sh", "-c", "exit 7"};
  auto p = StartInContainer(spec);
  REQUIRE(p.ok());
  CHECK((*p)->Wait() == 7);
  spec.argv = {"no-such-program"};
  auto missing = StartInContainer(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() ==
        "exec: \"no-such-program\": executable file not found in $PATH");
  spec.argv = {"sleep", "30"};
  auto sleeper = StartInContainer(spec);
  REQUIRE(sleeper.ok());
  (*sleeper)->Kill();
  CHECK((*sleeper)->Wait() == 128 + SIGKILL);
  REQUIRE(h.runner.Signal(*pid, SIGKILL).ok());
  REQUIRE(h.Wait());
}

TEST_CASE("pid namespace: a process joins a pause's namespace, is not PID 1, dies with it",
          "[process][sandbox][pidns][shared]") {
  SKIP_WITHOUT_PID_NAMESPACES();
  auto catatonit = FindExecutable("catatonit", {"PATH=/usr/bin:/bin"});
  if (!catatonit.ok()) {
    WARN("skipped: " << catatonit.status().message());
    return;
  }
  Harness pause("shared-pause");
  auto init = pause.Start({*catatonit, "-P"});
  REQUIRE(init.ok());
  ino_t ns = PidNamespaceOf(std::to_string(*init));
  Harness h("shared");
  auto pid = h.Start({"/bin/sh", "-c",
                      "echo pid=$$; ps -e -o pid=,args=; trap 'exit 143' TERM; "
                      "sleep 600 & while :; do sleep 0.05; done"},
                     *init);
  REQUIRE(pid.ok());
  CHECK(PidNamespaceOf(std::to_string(*pid)) == ns);
  h.Run(300ms);
  std::string log = h.Log();
  INFO(log);
  CHECK(log.find("stdout F pid=1\n") == std::string::npos);
  CHECK(log.find("1 " + *catatonit + " -P") != std::string::npos);  // the pause is PID 1
  // A SIGTERM to a process that is not its namespace's PID 1 is delivered as anywhere.
  REQUIRE(h.runner.Signal(*pid, SIGTERM).ok());
  REQUIRE(h.Wait(10s));
  CHECK(h.exit->exit_code == 143);
  // The pause outlives the container, also once its runner has removed the container's cgroup
  // (a few passes of its I/O loop); when it does not, how it ended says why.
  std::this_thread::sleep_for(300ms);
  if (PidNamespaceOf(std::to_string(*init)) != ns) {
    const std::string why = strerror(errno);
    pause.Wait(2s);
    if (pause.exit) {
      INFO("pause exit code " << pause.exit->exit_code << ", signal " << pause.exit->signal);
      INFO("pause log: " << pause.Log());
      FAIL("the pause ended with its container");
    }
    FAIL("the pause's PID namespace could not be read: " << why);
  }
  REQUIRE(pause.runner.Signal(*init, SIGKILL).ok());
  REQUIRE(pause.Wait());
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (ProcessesIn(ns) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(ProcessesIn(ns) == 0);
}

TEST_CASE("pid namespace: joining the namespace of a process that is gone is an error",
          "[process][pidns][shared]") {
  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  ProcessSpec spec;
  spec.argv = {"/bin/true"};
  spec.pid_namespace_of = 999999999;
  auto pid = runner.Start(spec, [](const ProcessExit&) {});
  REQUIRE_FALSE(pid.ok());
  CHECK(pid.status().message().find("/proc/999999999/ns/pid") != std::string::npos);
}

}  // namespace
}  // namespace pjemu::process
