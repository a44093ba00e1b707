// Given a MountPlan, PosixProcessRunner should start the process in the container's own
// filesystem: the host's root copy-on-write (writes land in root_upper), the plan's binds,
// overlays and tmpfs at their targets, argv[0] and the working directory resolved inside it,
// setup failures as runc words them, and the process as killable as without a plan.
// Skipped (with the probe's reason) where SandboxAvailable() fails, e.g. as non-root.
#include "emulator/process/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "emulator/process/posix_process_runner.h"
#include "emulator/process/proc_stats.h"
#include "tests/process/pid_pipe.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_SANDBOX()                  \
  do {                                          \
    Status available = SandboxAvailable();      \
    if (!available.ok()) {                      \
      WARN("skipped: " << available.message()); \
      return;                                   \
    }                                           \
  } while (false)

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

Mount MakeMount(Mount::Kind kind, std::string source, std::string target) {
  Mount m;
  m.kind = kind;
  m.source = std::move(source);
  m.target = std::move(target);
  return m;
}

// A fresh directory per test, with the container's root directories in a plan.
struct Box {
  fs::path dir;
  MountPlan plan;
  explicit Box(const std::string& name) {
    dir = fs::path(PJEMU_BINARY_DIR) / "sandbox_test" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    plan.enabled = true;
    plan.root_upper = (dir / "root-upper").string();
    plan.root_work = (dir / "root-work").string();
    plan.root_merged = (dir / "root").string();
  }
  // A host directory bound at `target`.
  fs::path Bind(const std::string& target, bool read_only = false,
                const std::string& name = "data") {
    fs::path host = dir / name;
    fs::create_directories(host);
    plan.mounts.push_back(MakeMount(Mount::Kind::kBind, host.string(), target));
    plan.mounts.back().read_only = read_only;
    return host;
  }
};

struct Harness {
  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  std::optional<ProcessExit> exit;

  Result<Pid> Start(const Box& box, std::vector<std::string> argv, std::string dir = "",
                    std::string log = "") {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
    spec.working_dir = std::move(dir);
    spec.log_path = std::move(log);
    spec.mounts = box.plan;
    spec.name = "default/pod/ctr";
    exit.reset();
    return runner.Start(spec, [this](const ProcessExit& e) { exit = e; });
  }
  // Runs a shell command in the box; its exit code (-1 when it did not start or end).
  int Sh(const Box& box, const std::string& script, std::string dir = "", std::string log = "") {
    auto pid = Start(box, {"/bin/sh", "-c", script}, std::move(dir), std::move(log));
    if (!pid.ok()) {
      UNSCOPED_INFO(pid.status().message());
      return -1;
    }
    if (!loop.RunUntil([this] { return exit.has_value(); }, 20s)) return -1;
    return exit->exit_code;
  }
};

TEST_CASE("sandbox: a bound host directory is written through", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("bind");
  fs::path data = box.Bind("/data");
  Harness h;
  REQUIRE(h.Sh(box, "echo hi > /data/out") == 0);
  CHECK(ReadAll(data / "out") == "hi\n");
}

TEST_CASE("sandbox: a read-only bind refuses writes", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("readonly");
  fs::path ro = box.Bind("/ro", true, "ro");
  fs::path data = box.Bind("/data");
  Harness h;
  CHECK(h.Sh(box, "echo x > /ro/f || exit 7") == 7);
  CHECK_FALSE(fs::exists(ro / "f"));
  // Written by the shell, whose redirection failed: the errno is EROFS.
  REQUIRE(h.Sh(box, "(echo x > /ro/f) 2> /data/err; cat /data/err") != -1);
  CHECK(ReadAll(data / "err").find("Read-only file system") != std::string::npos);
}

TEST_CASE("sandbox: an overlay takes the writes, its source stays untouched",
          "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("overlay");
  fs::path src = box.dir / "src";
  WriteFile(src / "a.txt", "orig\n");
  fs::path data = box.Bind("/data");
  Mount overlay = MakeMount(Mount::Kind::kOverlay, src.string(), "/opt/app");
  overlay.upper = (box.dir / "ov-upper").string();
  overlay.work = (box.dir / "ov-work").string();
  box.plan.mounts.push_back(overlay);
  Harness h;
  REQUIRE(h.Sh(box,
               "cat /opt/app/a.txt > /data/seen && echo new > /opt/app/a.txt && "
               "echo b > /opt/app/b.txt") == 0);
  CHECK(ReadAll(data / "seen") == "orig\n");
  CHECK(ReadAll(src / "a.txt") == "orig\n");
  CHECK_FALSE(fs::exists(src / "b.txt"));
  CHECK(ReadAll(box.dir / "ov-upper" / "a.txt") == "new\n");
  CHECK(ReadAll(box.dir / "ov-upper" / "b.txt") == "b\n");
}

TEST_CASE("sandbox: overlay paths may contain ':' and ','", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("overlay-odd-names");
  fs::path src = box.dir / "src:v1,x";
  WriteFile(src / "a.txt", "orig\n");
  Mount overlay = MakeMount(Mount::Kind::kOverlay, src.string(), "/opt/app");
  overlay.upper = (box.dir / "up:per").string();
  overlay.work = (box.dir / "wo,rk").string();
  box.plan.mounts.push_back(overlay);
  Harness h;
  REQUIRE(h.Sh(box, "test \"$(cat /opt/app/a.txt)\" = orig && echo b > /opt/app/b.txt") == 0);
  CHECK(ReadAll(box.dir / "up:per" / "b.txt") == "b\n");
}

TEST_CASE("sandbox: a tmpfs of a given size at /tmp", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("tmpfs");
  fs::path data = box.Bind("/data");
  box.plan.mounts.push_back(MakeMount(Mount::Kind::kTmpfs, "", "/tmp"));
  box.plan.mounts.back().size_bytes = 1 << 20;
  Harness h;
  REQUIRE(h.Sh(box,
               "stat -f -c %T /tmp > /data/type && df -k /tmp | tail -1 > /data/df && "
               "touch /tmp/mine") == 0);
  CHECK(ReadAll(data / "type") == "tmpfs\n");
  std::istringstream df(ReadAll(data / "df"));
  std::string device, kib;
  df >> device >> kib;
  CHECK(kib == "1024");
  CHECK_FALSE(fs::exists("/tmp/mine"));
  // Over its size the tmpfs is full.
  CHECK(h.Sh(box, "dd if=/dev/zero of=/tmp/big bs=1024 count=2048 2>/dev/null") != 0);
}

TEST_CASE("sandbox: writes to the root land in root_upper, never on the host",
          "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("root");
  Harness h;
  REQUIRE_FALSE(fs::exists("/etc/pjemu-test"));
  REQUIRE(h.Sh(box, "touch /etc/pjemu-test && test -e /etc/pjemu-test") == 0);
  CHECK_FALSE(fs::exists("/etc/pjemu-test"));
  CHECK(fs::exists(fs::path(box.plan.root_upper) / "etc" / "pjemu-test"));
  // Nothing of the sandbox's own scaffolding is left in the root.
  CHECK_FALSE(fs::exists(fs::path(box.plan.root_upper) / ".pjemu-host"));
}

// The host's own mounts appear read-only: a harness in a mount namespace of its own mounts a
// tmpfs (a "host mount" as far as the runner can tell) and runs a sandboxed writer over it.
TEST_CASE("sandbox: the host's other mounts are read-only", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("hostmount");
  fs::path mnt = box.dir / "host-mount";
  fs::create_directories(mnt);
  pid_t harness = fork();
  REQUIRE(harness >= 0);
  if (harness == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount("tmpfs", mnt.c_str(), "tmpfs", 0, nullptr) != 0) {
      _exit(90);
    }
    WriteFile(mnt / "seen", "host\n");
    Harness h;
    int code = h.Sh(box, "test \"$(cat " + mnt.string() + "/seen)\" = host || exit 91; touch " +
                             mnt.string() + "/new 2>/dev/null && exit 92; exit 0");
    _exit(code < 0 ? 93 : code);
  }
  int status = 0;
  REQUIRE(waitpid(harness, &status, 0) == harness);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("sandbox: a bound file replaces /etc/hosts", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("hosts");
  fs::path data = box.Bind("/data");
  WriteFile(box.dir / "etc-hosts", "10.0.0.1\tjob-master-0\n");
  box.plan.mounts.push_back(
      MakeMount(Mount::Kind::kBind, (box.dir / "etc-hosts").string(), "/etc/hosts"));
  Harness h;
  REQUIRE(h.Sh(box, "cat /etc/hosts > /data/hosts") == 0);
  CHECK(ReadAll(data / "hosts") == "10.0.0.1\tjob-master-0\n");
}

TEST_CASE("sandbox: argv[0] found only inside the pod runs", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("argv0");
  fs::path data = box.Bind("/data");
  WriteFile(data / "run.sh", "#!/bin/sh\necho \"ran $1\" > /data/ran\n");
  fs::permissions(data / "run.sh",
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  Harness h;
  SECTION("by its path") {
    auto pid = h.Start(box, {"/data/run.sh", "one"});
    REQUIRE(pid.ok());
    REQUIRE(h.loop.RunUntil([&] { return h.exit.has_value(); }, 20s));
    CHECK(ReadAll(data / "ran") == "ran one\n");
  }
  SECTION("through PATH and the working directory") {
    ProcessSpec spec;
    spec.argv = {"run.sh", "two"};
    spec.env = {"PATH=/usr/bin:/data"};
    spec.mounts = box.plan;
    auto pid = h.runner.Start(spec, [&](const ProcessExit& e) { h.exit = e; });
    REQUIRE(pid.ok());
    REQUIRE(h.loop.RunUntil([&] { return h.exit.has_value(); }, 20s));
    CHECK(h.exit->exit_code == 0);
    CHECK(ReadAll(data / "ran") == "ran two\n");
  }
}

TEST_CASE("sandbox: a missing program is the runtime's exec error", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("missing");
  Harness h;
  auto searched = h.Start(box, {"pjemu-no-such-program"});
  REQUIRE_FALSE(searched.ok());
  CHECK(searched.status().code() == Code::kNotFound);
  CHECK(searched.status().message() ==
        "exec: \"pjemu-no-such-program\": executable file not found in $PATH");
  auto explicit_path = h.Start(box, {"/nope/run.sh"});
  REQUIRE_FALSE(explicit_path.ok());
  CHECK(explicit_path.status().message() == "exec: \"/nope/run.sh\": no such file or directory");
  CHECK(h.runner.running() == 0);
}

TEST_CASE("sandbox: a bad mount source or working directory fails the start",
          "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("badsource");
  Harness h;
  SECTION("mount source") {
    box.plan.mounts.push_back(MakeMount(Mount::Kind::kBind, "/pjemu-no-such/src", "/opt/data"));
    auto pid = h.Start(box, {"true"});
    REQUIRE_FALSE(pid.ok());
    CHECK(pid.status().code() == Code::kInvalid);
    CHECK(pid.status().message() ==
          "error mounting \"/pjemu-no-such/src\" to rootfs at \"/opt/data\": "
          "no such file or directory");
  }
  SECTION("working directory") {
    // A file where the directory should be (a missing one is made, as containerd does).
    fs::path data = box.Bind("/data");
    std::ofstream(data / "file") << "x";
    auto pid = h.Start(box, {"true"}, "/data/file");
    REQUIRE_FALSE(pid.ok());
    CHECK(pid.status().message() ==
          "chdir to cwd (\"/data/file\") set in config.json failed: not a directory");
  }
  CHECK(h.runner.running() == 0);
}

TEST_CASE("sandbox: the working directory is a path inside the pod", "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("workdir");
  fs::path data = box.Bind("/data");
  fs::create_directories(data / "sub");
  Harness h;
  REQUIRE(h.Sh(box, "pwd > /data/sub/pwd", "/data/sub") == 0);
  CHECK(ReadAll(data / "sub" / "pwd") == "/data/sub\n");  // A missing one is made (mkdir -p), as containerd makes a missing workingDir.
  REQUIRE(h.Sh(box, "pwd > /data/pwd", "/data/new/deep") == 0);
  CHECK(ReadAll(data / "pwd") == "/data/new/deep\n");
  CHECK(fs::is_directory(data / "new" / "deep"));
}

bool Alive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

TEST_CASE("sandbox: the process group is killable and measured as without a plan",
          "[process][sandbox]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("kill");
  Harness h;
  auto pid = h.Start(box, {PJEMU_TEST_PROGRAM, "--fork-child", "--sleep-ms", "60000"});
  REQUIRE(pid.ok());
  for (int i = 0; i < 200 && GroupMembers(*pid).size() < 2; ++i) {
    h.loop.RunUntil([] { return false; }, 10ms);
  }
  std::vector<pid_t> members = GroupMembers(*pid);
  REQUIRE(members.size() == 2);
  CHECK(RssByGroup({*pid})[*pid] > 0);
  REQUIRE(h.runner.Signal(*pid, SIGKILL).ok());
  REQUIRE(h.loop.RunUntil([&] { return h.exit.has_value(); }, 10s));
  CHECK(h.exit->signal == SIGKILL);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t p : members) {
    while (Alive(p) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK_FALSE(Alive(p));
  }
}

TEST_CASE("sandbox: no sandboxed process survives the emulator being SIGKILLed",
          "[process][sandbox][orphans]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("orphans");
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  pid_t harness = fork();
  REQUIRE(harness >= 0);
  if (harness == 0) {
    close(fds[0]);
    Harness h;
    auto pid = h.Start(box, {PJEMU_TEST_PROGRAM, "--fork-child", "--sleep-ms", "60000"});
    if (!pid.ok()) _exit(1);
    for (int i = 0; i < 200 && GroupMembers(*pid).size() < 2; ++i) {
      h.loop.RunUntil([] { return false; }, 10ms);
    }
    std::string msg;
    for (pid_t p : GroupMembers(*pid)) msg += std::to_string(p) + "\n";
    (void)!write(fds[1], msg.data(), msg.size());
    close(fds[1]);
    h.loop.RunUntil([] { return false; }, 60s);
    _exit(0);
  }
  close(fds[1]);
  std::vector<pid_t> pids = testing::ReadPids(fds[0]);
  REQUIRE(pids.size() == 2);
  kill(harness, SIGKILL);
  waitpid(harness, nullptr, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t p : pids) {
    while (Alive(p) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK_FALSE(Alive(p));
  }
}

// Not a bound: prints what a sandbox adds to a start (`true`, 50 times each way), and what
// a PID namespace and a cgroup add to that (the runner without cgroups is what the kubelet had).
TEST_CASE("sandbox: start latency of a sandboxed process", "[process][sandbox][latency]") {
  SKIP_WITHOUT_SANDBOX();
  Box box("latency");
  MountPlan none;
  Harness h;
  PosixRunnerOptions no_cgroups;
  no_cgroups.cgroups = false;
  PosixProcessRunner bare(h.loop, no_cgroups);
  // Mean Start() time and mean time until the exit is reported, one process at a time (the
  // sandboxed ones share a root_upper).
  auto measure = [&](const MountPlan& plan, PosixProcessRunner& runner, bool pid_ns) {
    double start_ms = 0, cycle_ms = 0;
    for (int i = 0; i < 50; ++i) {
      ProcessSpec spec;
      spec.argv = {"/bin/true"};
      spec.mounts = plan;
      spec.own_pid_namespace = pid_ns;
      h.exit.reset();
      auto begin = std::chrono::steady_clock::now();
      auto pid = runner.Start(spec, [&](const ProcessExit& e) { h.exit = e; });
      auto started = std::chrono::steady_clock::now();
      REQUIRE(pid.ok());
      REQUIRE(h.loop.RunUntil([&] { return h.exit.has_value(); }, 10s));
      REQUIRE(h.exit->exit_code == 0);
      auto done = std::chrono::steady_clock::now();
      start_ms += std::chrono::duration<double, std::milli>(started - begin).count() / 50;
      cycle_ms += std::chrono::duration<double, std::milli>(done - begin).count() / 50;
    }
    return std::make_pair(start_ms, cycle_ms);
  };
  auto plain = measure(none, bare, false);
  auto sandboxed = measure(box.plan, bare, false);
  bool isolated = PidNamespaceAvailable().ok() && h.runner.cgroups_status().ok();
  auto full = isolated ? measure(box.plan, h.runner, true) : sandboxed;
  std::printf(
      "sandbox latency (mean of 50, /bin/true): Start() %.2f ms plain, %.2f ms sandboxed, "
      "%.2f ms sandboxed + PID namespace + cgroup; start to exit reported %.2f ms plain, "
      "%.2f ms sandboxed, %.2f ms with both%s\n",
      plain.first, sandboxed.first, full.first, plain.second, sandboxed.second, full.second,
      isolated ? "" : " (PID namespaces or cgroups unavailable: not measured)");
  CHECK(h.runner.running() == 0);
  CHECK(bare.running() == 0);
}

}  // namespace
}  // namespace pjemu::process
