#include "emulator/process/container_exec.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "emulator/process/exec_path.h"

namespace pjemu::process {
namespace {

// What the child reports through the pipe when it cannot exec.
enum class Failed : int { kSetup = 1, kNamespace, kRoot, kChdir, kNotFound, kExec };
struct Report {
  Failed what = Failed::kSetup;
  int err = 0;
};

// Everything the child needs, prepared in the parent (the child of a threaded process may only
// make async-signal-safe calls).
struct ChildPlan {
  pid_t parent = 0;
  int in = -1, out = -1, err = -1;  // the child's ends (0, 1, 2)
  const char* pty_slave = nullptr;  // tty: the terminal's path, opened as fds 0-2
  int uts_ns = -1, mnt_ns = -1, root = -1;
  int pid_ns = -1;            // the container's PID namespace when it is not ours (-1: stay)
  int net_ns = -1;            // the pod's network namespace when it is not ours (-1: stay)
  const char* dir = nullptr;  // nullptr = stay
  std::vector<const char*> candidates;
  bool searched = false;  // argv[0] had no '/'
  char** argv = nullptr;
  char** envp = nullptr;
  int report = -1;
};

[[noreturn]] void Fail(const ChildPlan& p, Failed what, int err) {
  Report r{what, err};
  (void)!write(p.report, &r, sizeof r);
  _exit(127);
}

void SetUpStdio(const ChildPlan& p) {
  if (p.pty_slave != nullptr) {
    int fd = open(p.pty_slave, O_RDWR);
    if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) != 0) Fail(p, Failed::kSetup, errno);
    dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
    if (fd > 2) close(fd);
    return;
  }
  dup2(p.in, 0), dup2(p.out, 1), dup2(p.err, 2);
}

// setns(CLONE_NEWPID) places only the children made after it: fork, and let this process wait
// for the child (in the container's namespace, so its /proc and `ps` show the container's
// processes) and exit as it did. It ignores the terminal's signals, which reach the child in the
// same process group; a SIGKILL of the group reaches both; the child dies with it.
void EnterPidNamespace(const ChildPlan& p) {
  if (setns(p.pid_ns, CLONE_NEWPID) != 0) Fail(p, Failed::kNamespace, errno);
  pid_t child = fork();
  if (child < 0) Fail(p, Failed::kSetup, errno);
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return;
  }
  // The child reports; and this process never execs, so it would hold every descriptor it
  // inherited (close-on-exec or not): the stdin pipe's write end above all, and the child's
  // `cat` would never see EOF. It needs none of them.
  close_range(3, ~0U, 0);
  for (int sig : {SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGTERM, SIGPIPE}) {
    signal(sig, SIG_IGN);
  }
  int st = 0;
  while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  _exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}

[[noreturn]] void RunChild(const ChildPlan& p) {
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != p.parent) _exit(137);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  SetUpStdio(p);
  if (p.net_ns >= 0 && setns(p.net_ns, CLONE_NEWNET) != 0) Fail(p, Failed::kNamespace, errno);
  if (p.mnt_ns >= 0) {
    if (setns(p.uts_ns, CLONE_NEWUTS) != 0) Fail(p, Failed::kNamespace, errno);
    if (setns(p.mnt_ns, CLONE_NEWNS) != 0) Fail(p, Failed::kNamespace, errno);
    if (fchdir(p.root) != 0 || chroot(".") != 0) Fail(p, Failed::kRoot, errno);
  }
  if (p.dir != nullptr && chdir(p.dir) != 0) Fail(p, Failed::kChdir, errno);
  if (p.pid_ns >= 0) EnterPidNamespace(p);
  int last = ENOENT;
  for (const char* c : p.candidates) {
    struct stat st {};
    if (stat(c, &st) == 0 && S_ISREG(st.st_mode) && access(c, X_OK) == 0) {
      execve(c, p.argv, p.envp);
      Fail(p, Failed::kExec, errno);
    }
    if (!p.searched) last = access(c, F_OK) == 0 ? EACCES : ENOENT;
  }
  Fail(p, p.searched ? Failed::kNotFound : Failed::kExec, last);
}

class ExecedProcess final : public api::ExecProcess {
 public:
  ExecedProcess(pid_t pid, int in, int out, int err, bool tty)
      : pid_(pid), in_(in), out_(out), err_(err), tty_(tty) {}
  ~ExecedProcess() override {
    Kill();
    Wait();
    std::lock_guard<std::mutex> lock(mu_);
    if (!tty_) CloseFd(in_);
    CloseFd(out_);
    CloseFd(err_);
  }
  int stdin_fd() const override { return in_; }
  int stdout_fd() const override { return out_; }
  int stderr_fd() const override { return err_; }
  void CloseStdin() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (tty_) {
      if (in_ >= 0) (void)!write(in_, "\x04", 1);  // the terminal's end of file
      in_ = -1;                                    // the master stays open for output
      return;
    }
    CloseFd(in_);
  }
  int Wait() override {
    std::lock_guard<std::mutex> lock(wait_mu_);
    if (code_ >= 0) return code_;
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    code_ = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
    reaped_ = true;
    return code_;
  }
  void Kill() override {
    if (!reaped_) kill(-pid_, SIGKILL);
  }
  void Resize(int width, int height) override {
    if (!tty_ || width <= 0 || height <= 0) return;
    struct winsize ws {};
    ws.ws_col = static_cast<unsigned short>(width);
    ws.ws_row = static_cast<unsigned short>(height);
    ioctl(out_, TIOCSWINSZ, &ws);
  }

 private:
  pid_t pid_;
  std::mutex mu_;
  std::mutex wait_mu_;
  int in_, out_, err_;
  bool tty_;
  int code_ = -1;
  std::atomic<bool> reaped_{false};
};

// The fds a child gets: pipes, or a pseudo-terminal. parent_fds: stdin (write), stdout, stderr.
Status OpenStdio(const ContainerExecSpec& spec, ChildPlan& plan, int parent_fds[3],
                 std::string& slave) {
  if (spec.tty) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 ||
        ptsname_r(master, name, sizeof name) != 0) {
      if (master >= 0) close(master);
      return InternalError("pty: " + ErrnoText(errno));
    }
    slave = name;
    plan.pty_slave = slave.c_str();
    parent_fds[0] = spec.with_stdin ? master : -1;
    parent_fds[1] = master;
    parent_fds[2] = -1;
    return Status::Ok();
  }
  int in[2] = {-1, -1}, out[2], err[2];
  if (spec.with_stdin ? pipe2(in, O_CLOEXEC) != 0
                      : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    return InternalError("pipe: " + ErrnoText(errno));
  }
  if (pipe2(out, O_CLOEXEC) != 0) return InternalError("pipe: " + ErrnoText(errno));
  if (pipe2(err, O_CLOEXEC) != 0) return InternalError("pipe: " + ErrnoText(errno));
  plan.in = in[0], plan.out = out[1], plan.err = err[1];
  parent_fds[0] = in[1], parent_fds[1] = out[0], parent_fds[2] = err[0];
  return Status::Ok();
}

Status OpenNamespaces(const ContainerExecSpec& spec, ChildPlan& plan) {
  std::string proc = "/proc/" + std::to_string(spec.target);
  if (kill(spec.target, 0) != 0) return Status(Code::kNotFound, "container not running");
  // The PID and network namespaces are joined whenever they are not the emulator's.
  for (auto [kind, fd] : {std::pair{"pid", &plan.pid_ns}, std::pair{"net", &plan.net_ns}}) {
    std::string ns = std::string("/ns/") + kind;
    struct stat theirs {
    }, ours{};
    if (stat((proc + ns).c_str(), &theirs) != 0 || stat(("/proc/self" + ns).c_str(), &ours) != 0 ||
        theirs.st_ino == ours.st_ino) {
      continue;
    }
    *fd = open((proc + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (*fd < 0) return InternalError("open the namespaces of " + proc + ": " + ErrnoText(errno));
  }
  if (!spec.enter_namespaces) return Status::Ok();
  plan.uts_ns = open((proc + "/ns/uts").c_str(), O_RDONLY | O_CLOEXEC);
  plan.mnt_ns = open((proc + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC);
  plan.root = open((proc + "/root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (plan.uts_ns < 0 || plan.mnt_ns < 0 || plan.root < 0) {
    return InternalError("open the namespaces of " + proc + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

Status Describe(const Report& r, const ContainerExecSpec& spec, const std::string& dir) {
  std::string argv0 = "\"" + spec.argv[0] + "\"";
  switch (r.what) {
    case Failed::kNotFound:
      return Status(Code::kNotFound, "exec: " + argv0 + ": executable file not found in $PATH");
    case Failed::kExec:
      return Status(Code::kNotFound, "exec: " + argv0 + ": " + ErrnoText(r.err));
    case Failed::kChdir:
      return Status(Code::kInvalid, "chdir to cwd (\"" + dir +
                                        "\") set in config.json failed: " + ErrnoText(r.err));
    case Failed::kNamespace:
      return InternalError("join the container's namespaces: " + ErrnoText(r.err));
    case Failed::kRoot:
      return InternalError("enter the container's root: " + ErrnoText(r.err));
    default:
      return InternalError("exec setup: " + ErrnoText(r.err));
  }
}

}  // namespace

Result<std::unique_ptr<api::ExecProcess>> StartInContainer(const ContainerExecSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status(Code::kInvalid, "command: an exec needs at least one argument");
  }
  ChildPlan plan;
  int parent_fds[3] = {-1, -1, -1};
  std::string slave;
  int report[2] = {-1, -1};
  auto cleanup = [&] {
    for (int* fd : {&plan.in, &plan.out, &plan.err, &plan.uts_ns, &plan.mnt_ns, &plan.root,
                    &plan.pid_ns, &plan.net_ns}) {
      CloseFd(*fd);
    }
  };
  Status s = OpenNamespaces(spec, plan);
  if (s.ok()) s = OpenStdio(spec, plan, parent_fds, slave);
  if (s.ok() && pipe2(report, O_CLOEXEC) != 0) s = InternalError("pipe: " + ErrnoText(errno));
  if (!s.ok()) {
    cleanup();
    if (parent_fds[1] != parent_fds[0]) CloseFd(parent_fds[0]);
    CloseFd(parent_fds[1]);
    CloseFd(parent_fds[2]);
    return s;
  }
  std::string dir = spec.working_dir.empty() && spec.enter_namespaces ? "/" : spec.working_dir;
  plan.dir = dir.empty() ? nullptr : dir.c_str();
  plan.searched = spec.argv[0].find('/') == std::string::npos;
  std::vector<std::string> candidates =
      plan.searched ? PathCandidates(spec.argv[0], spec.env) : std::vector{spec.argv[0]};
  for (const auto& c : candidates) plan.candidates.push_back(c.c_str());
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.report = report[1];
  plan.parent = getpid();
  pid_t pid = fork();
  if (pid == 0) RunChild(plan);
  int fork_errno = errno;
  CloseFd(report[1]);
  cleanup();  // the child's ends and the namespace fds; report[0] is read below
  Report child{};
  ssize_t n = -1;
  if (pid > 0) {
    do {
      n = read(report[0], &child, sizeof child);
    } while (n < 0 && errno == EINTR);
  }
  CloseFd(report[0]);
  if (pid < 0 || n == static_cast<ssize_t>(sizeof child)) {
    if (pid > 0) waitpid(pid, nullptr, 0);
    if (parent_fds[1] != parent_fds[0]) CloseFd(parent_fds[0]);
    CloseFd(parent_fds[1]);
    CloseFd(parent_fds[2]);
    if (pid < 0) return InternalError("fork: " + ErrnoText(fork_errno));
    return Describe(child, spec, dir);
  }
  return std::unique_ptr<api::ExecProcess>(
      new ExecedProcess(pid, parent_fds[0], parent_fds[1], parent_fds[2], spec.tty));
}

}  // namespace pjemu::process
