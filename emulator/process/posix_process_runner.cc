#include "emulator/process/posix_process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "emulator/process/cri_log_writer.h"
#include "emulator/process/exec_path.h"
#include "emulator/process/proc_stats.h"
#include "emulator/process/sandbox.h"

namespace pjemu::process {

struct PosixProcessRunner::Proc {
  Pid pid = 0;
  ExitCallback on_exit;
  std::unique_ptr<CriLogWriter> log;
  int out_fd = -1;
  int err_fd = -1;
  std::int64_t memory_limit = 0;
  std::string name;  // ProcessSpec::name
  bool pid_ns = false;                    // PID 1 of its own PID namespace: signalled alone
  std::optional<ContainerCgroup> cgroup;  // the kernel enforces its limits and counts its use
  bool exited = false;
  bool oom_killed = false;
  ProcessExit exit;
  Time exited_at{};
};

namespace {

// Runs in the forked child: async-signal-safe calls only (the parent has threads). Without a
// sandbox the parent has resolved `path` and checked `dir`; with one, the sandbox enters the
// container's filesystem, its working directory, and looks argv[0] up there.
// In a PID namespace of its own the parent is invisible (getppid() is 0): the parent is known to
// be alive while the report pipe has a reader, which poll says (POLLERR) on its write end.
[[noreturn]] void ExecChild(pid_t parent, int out_fd, int err_fd, int null_fd, int report_fd,
                            const char* dir, const char* path, const SandboxProgram* sandbox,
                            const std::vector<int>* cgroup_fds, int netns_fd, char** argv,
                            char** envp) {
  setpgid(0, 0);
  for (int fd : *cgroup_fds) {  // into the container's cgroup before anything is allocated
    if (write(fd, "0", 1) != 1) {
      ChildReport r{kReportCgroup, errno};
      (void)!write(report_fd, &r, sizeof r);
      _exit(127);
    }
  }
  if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) {
    ChildReport r{kReportNetns, errno};
    (void)!write(report_fd, &r, sizeof r);
    _exit(127);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 0) {  // PID 1 of its own namespace, or in a pod's shared one
    pollfd p{report_fd, POLLOUT, 0};
    if (poll(&p, 1, 0) < 0 || (p.revents & POLLERR)) _exit(137);
  } else if (getppid() != parent) {
    _exit(137);  // the parent died before prctl took effect
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  ChildReport report{kReportExec, 0};
  if (sandbox != nullptr) {
    sandbox->RunAndExec(argv, envp, &report);
  } else if (dir[0] != '\0' && chdir(dir) != 0) {
    report.err = errno;
  } else {
    execve(path, argv, envp);
    report.err = errno;
  }
  (void)!write(report_fd, &report, sizeof report);
  _exit(127);
}

// fork(), or with `own_namespace` a clone(CLONE_NEWPID) with fork's semantics (no new stack),
// the child PID 1 of a namespace of its own. The child runs `child` (which never returns).
template <typename Child>
Result<pid_t> ForkOwn(bool own_namespace, const Child& child) {
  pid_t pid = own_namespace ? static_cast<pid_t>(syscall(SYS_clone, CLONE_NEWPID | SIGCHLD,
                                                         nullptr, nullptr, nullptr, nullptr))
                            : fork();
  if (pid == 0) child();
  if (pid < 0) return InternalError("fork: " + std::string(strerror(errno)));
  return pid;
}

// Forks the child into the PID namespace of process `init` (its PID 1). setns(CLONE_NEWPID)
// changes where the calling thread's next children go, not the thread itself: enter, fork,
// and go back to this process's own namespace at once (a thread made in between by this
// thread would fail). Other threads are not affected.
template <typename Child>
Result<pid_t> ForkInto(Pid init, const Child& child) {
  std::string path = "/proc/" + std::to_string(init) + "/ns/pid";
  int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    return InternalError("open the pod's PID namespace " + path + ": " + strerror(errno));
  }
  int own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (own < 0 || setns(target, CLONE_NEWPID) != 0) {
    int e = errno;
    close(target);
    if (own >= 0) close(own);
    return InternalError("enter the pod's PID namespace " + path + ": " + strerror(e));
  }
  pid_t pid = fork();
  int fork_errno = errno;
  if (pid == 0) child();
  (void)setns(own, CLONE_NEWPID);  // back to our own: always allowed (the active namespace)
  close(own), close(target);
  if (pid < 0) return InternalError("fork: " + std::string(strerror(fork_errno)));
  return pid;
}

// Checks what can be checked before the fork and prepares the exec: the resolved path without
// a mount plan, the compiled sandbox with one.
Status PrepareExec(const ProcessSpec& spec, std::string& path,
                   std::optional<SandboxProgram>& sandbox) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status(Code::kInvalid, "process " + spec.name + ": empty command");
  }
  if (spec.mounts.enabled) {
    ASSIGN_OR_RETURN(
        sandbox, SandboxProgram::Compile(spec.mounts, spec.working_dir, spec.argv[0], spec.env));
    return Status::Ok();
  }
  if (!spec.working_dir.empty()) {
    struct stat st {};
    if (stat(spec.working_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status(Code::kInvalid, "chdir to cwd (\"" + spec.working_dir +
                                        "\") set in config.json failed: no such file or directory");
    }
  }
  ASSIGN_OR_RETURN(path, FindExecutable(spec.argv[0], spec.env));
  return Status::Ok();
}

}  // namespace

PosixProcessRunner::PosixProcessRunner(EventLoop& loop, PosixRunnerOptions options)
    : loop_(loop), options_(options) {
  if (options_.cgroups) {
    auto root = CgroupRoot::Open();
    if (root.ok()) {
      cgroups_ = *root;
    } else {
      cgroups_status_ = root.status();
    }
  } else {
    cgroups_status_ = Status(Code::kUnavailable, "cgroups off");
  }
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  io_ = std::thread([this] { IoLoop(); });
}

PosixProcessRunner::~PosixProcessRunner() {
  drop_callbacks_ = true;
  KillAll();
  // SIGKILLed groups are reaped within a few poll intervals; the bound only guards against a
  // process stuck in the kernel (the OrphanGuard still kills its group when we go).
  for (int i = 0; i < 2000 && running() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop_ = true;
  if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
  io_.join();
  for (int i = 0; i < 100; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      RemoveCgroups();
      if (dead_cgroups_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CloseFd(wake_[0]);
  CloseFd(wake_[1]);
}

Result<Pid> PosixProcessRunner::Start(const ProcessSpec& spec, ExitCallback on_exit) {
  std::string path;
  std::optional<SandboxProgram> sandbox;
  RETURN_IF_ERROR(PrepareExec(spec, path, sandbox));
  auto proc = std::make_unique<Proc>();
  proc->log = std::make_unique<CriLogWriter>(loop_.clock(), spec.log_path);
  if (!proc->log->ok()) {
    return Status(Code::kInternal, "open log file " + spec.log_path + ": " + std::strerror(errno));
  }
  int out[2], err[2], report[2];
  if (pipe2(out, O_CLOEXEC) != 0) return InternalError("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    return InternalError("pipe: " + std::string(strerror(errno)));
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    return InternalError("pipe: " + std::string(strerror(errno)));
  }
  std::optional<ContainerCgroup> cgroup;
  if (cgroups_) {
    auto made = cgroups_->Create({.memory_bytes = spec.memory_limit_bytes,
                                  .cpu_limit_millis = spec.cpu_limit_millis,
                                  .cpu_request_millis = spec.cpu_request_millis});
    if (!made.ok()) {
      close(out[0]), close(out[1]), close(err[0]), close(err[1]);
      close(report[0]), close(report[1]);
      return made.status();
    }
    cgroup = std::move(*made);
  }
  static const std::vector<int> kNoCgroup;
  const std::vector<int>* cgroup_fds = cgroup ? &cgroup->procs_fds() : &kNoCgroup;
  int netns_fd = -1;
  if (!spec.netns_path.empty()) {
    netns_fd = open(spec.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (netns_fd < 0) {
      int e = errno;
      close(out[0]), close(out[1]), close(err[0]), close(err[1]);
      close(report[0]), close(report[1]);
      if (cgroup) cgroups_->Remove(*cgroup);
      return InternalError("open network namespace " + spec.netns_path + ": " + strerror(e));
    }
  }
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  pid_t parent = getpid();
  auto exec_child = [&] {
    ExecChild(parent, out[1], err[1], null_fd, report[1], spec.working_dir.c_str(), path.c_str(),
              sandbox ? &*sandbox : nullptr, cgroup_fds, netns_fd, argv.data(), envp.data());
  };
  Result<pid_t> forked = spec.pid_namespace_of > 0 ? ForkInto(spec.pid_namespace_of, exec_child)
                                                   : ForkOwn(spec.own_pid_namespace, exec_child);
  pid_t pid = forked.ok() ? *forked : -1;
  close(out[1]), close(err[1]), close(report[1]);
  if (netns_fd >= 0) close(netns_fd);
  if (cgroup) cgroup->CloseProcs();
  if (null_fd >= 0) close(null_fd);
  if (!forked.ok()) {
    close(out[0]), close(err[0]), close(report[0]);
    if (cgroup) cgroups_->Remove(*cgroup);
    return forked.status();
  }
  setpgid(pid, pid);  // also here, so the group exists before anyone signals it
  guard_.Add(pid);
  ChildReport child{};
  ssize_t n;
  do {
    n = read(report[0], &child, sizeof child);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child)) {
    waitpid(pid, nullptr, 0);
    guard_.Remove(pid);
    close(out[0]), close(err[0]);
    if (cgroup) cgroups_->Remove(*cgroup);
    if (child.step == kReportNetns) {
      return InternalError("join network namespace " + spec.netns_path + ": " +
                           strerror(child.err));
    }
    if (child.step == kReportCgroup) {
      return InternalError("cgroup: join " + cgroup->dirs().front() + ": " + strerror(child.err));
    }
    if (sandbox) return sandbox->Describe(child);
    return Status(Code::kNotFound, "exec: \"" + spec.argv[0] + "\": " + strerror(child.err));
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  proc->pid = pid;
  proc->on_exit = std::move(on_exit);
  proc->out_fd = out[0];
  proc->err_fd = err[0];
  proc->memory_limit = spec.memory_limit_bytes;
  proc->name = spec.name;
  proc->pid_ns = spec.own_pid_namespace;
  proc->cgroup = std::move(cgroup);
  {
    std::lock_guard<std::mutex> lock(mu_);
    procs_[pid] = std::move(proc);
  }
  if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
  return pid;
}

Status PosixProcessRunner::Signal(Pid pid, int sig) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = procs_.find(pid);
  if (it == procs_.end() || it->second->exited) {
    return Status(Code::kNotFound, "process " + std::to_string(pid) + " has exited");
  }
  if (kill(it->second->pid_ns ? pid : -pid, sig) != 0)
    return InternalError("kill: " + std::string(strerror(errno)));
  return Status::Ok();
}

void PosixProcessRunner::KillAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [pid, proc] : procs_) kill(-pid, SIGKILL);
}

std::size_t PosixProcessRunner::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return procs_.size();
}

std::vector<std::pair<Pid, std::string>> PosixProcessRunner::Live() const {
  std::vector<std::pair<Pid, std::string>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [pid, proc] : procs_) {
    if (!proc->exited) out.emplace_back(pid, proc->name);
  }
  return out;
}

std::optional<CgroupUsage> PosixProcessRunner::CgroupUsageOf(Pid pid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = procs_.find(pid);
  if (it == procs_.end() || it->second->exited || !it->second->cgroup) return std::nullopt;
  return it->second->cgroup->Usage();
}

void PosixProcessRunner::RemoveCgroups() {
  std::erase_if(dead_cgroups_, [this](const ContainerCgroup& cg) {
    if (cgroups_->Remove(cg)) return true;
    for (pid_t p : cg.Members()) kill(p, SIGKILL);
    return false;
  });
}

void PosixProcessRunner::IoLoop() {
  Time last_measure{};
  while (!stop_) {
    PollPipes();
    Time now = loop_.clock().Now();
    bool measure = now - last_measure >= options_.memory_interval;
    if (measure) last_measure = now;
    ReapAndMeasure(now, measure);
  }
}

void PosixProcessRunner::PollPipes() {
  std::vector<pollfd> fds;
  fds.push_back({wake_[0], POLLIN, 0});
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [pid, proc] : procs_) {
      if (proc->out_fd >= 0) fds.push_back({proc->out_fd, POLLIN, 0});
      if (proc->err_fd >= 0) fds.push_back({proc->err_fd, POLLIN, 0});
    }
  }
  int timeout_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.poll_interval).count());
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  if (fds[0].revents) {
    char buf[64];
    while (read(wake_[0], buf, sizeof buf) > 0) {
    }
  }
  std::set<int> ready;
  for (std::size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents) ready.insert(fds[i].fd);
  }
  std::lock_guard<std::mutex> lock(mu_);
  char buf[65536];
  for (auto& [pid, proc] : procs_) {
    for (int* fd : {&proc->out_fd, &proc->err_fd}) {
      if (*fd < 0 || !ready.count(*fd)) continue;
      const char* stream = fd == &proc->out_fd ? "stdout" : "stderr";
      ssize_t n = read(*fd, buf, sizeof buf);
      if (n > 0) {
        proc->log->Write(stream, std::string_view(buf, n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        CloseFd(*fd);
      }
    }
  }
}

void PosixProcessRunner::ReapAndMeasure(Time now, bool measure) {
  std::vector<std::pair<ExitCallback, ProcessExit>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<pid_t> limited;
    for (auto& [pid, proc] : procs_) {
      if (!proc->exited) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r < 0 && errno == ECHILD) st = 255 << 8;  // reaped elsewhere: report exit 255
        if (r == pid || (r < 0 && errno == ECHILD)) {
          proc->exited = true;
          proc->exited_at = now;
          ProcessExit& e = proc->exit;
          e.pid = pid;
          if (WIFSIGNALED(st)) {
            e.signal = WTERMSIG(st);
            e.exit_code = 128 + e.signal;
          } else {
            e.exit_code = WEXITSTATUS(st);
          }
          // With a cgroup the kernel's OOM killer decides, and its counter says; without, the
          // sampling below.
          e.oom_killed =
              proc->cgroup ? proc->cgroup->OomKills() > 0 : proc->oom_killed && e.signal == SIGKILL;
          e.finished_at = now;
          // A container ends when its main process does: the rest of the group goes with it.
          kill(-pid, SIGKILL);
        } else if (proc->memory_limit > 0 && !proc->cgroup) {
          limited.insert(pid);
        }
      }
    }
    if (measure && !limited.empty()) {
      auto rss = RssByGroup(limited);
      for (auto& [pgid, bytes] : rss) {
        Proc& proc = *procs_[pgid];
        if (bytes > proc.memory_limit && !proc.oom_killed) {
          proc.oom_killed = true;
          kill(-pgid, SIGKILL);
        }
      }
    }
    for (auto it = procs_.begin(); it != procs_.end();) {
      Proc& proc = *it->second;
      bool drained = proc.out_fd < 0 && proc.err_fd < 0;
      if (proc.exited && (drained || now - proc.exited_at >= options_.drain_timeout)) {
        CloseFd(proc.out_fd);
        CloseFd(proc.err_fd);
        proc.log->Flush();
        proc.log.reset();
        guard_.Remove(proc.pid);
        if (proc.cgroup) dead_cgroups_.push_back(std::move(*proc.cgroup));
        done.emplace_back(std::move(proc.on_exit), proc.exit);
        it = procs_.erase(it);
      } else {
        ++it;
      }
    }
    if (!dead_cgroups_.empty()) RemoveCgroups();
  }
  if (drop_callbacks_) return;
  for (auto& [cb, exit] : done) {
    if (cb) loop_.Post([cb = std::move(cb), exit = exit] { cb(exit); });
  }
}

}  // namespace pjemu::process
