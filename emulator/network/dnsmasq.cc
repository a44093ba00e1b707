#include "emulator/network/dnsmasq.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "emulator/process/exec_path.h"

namespace pjemu::network {
namespace {

std::vector<std::string> Argv(const std::string& path, const DnsmasqOptions& o) {
  return {path,
          "--keep-in-foreground",
          "--no-resolv",
          "--no-hosts",
          "--no-poll",
          "--hostsdir=" + o.hosts_dir,
          "--listen-address=" + o.listen_address,
          "--bind-interfaces",
          "--pid-file=",
          "--user=root",  // as pjemu: it reads pjemu's files in /run
          "--local-ttl=0",  // a pod's resolver keeps no old answer
          // NXDOMAIN for every name not in the hosts files: a REFUSED answer would end glibc's
          // walk down the search path (`web.default` first tries web.default.<ns>.svc...).
          "--address=/#/",
          "--log-facility=" + o.log_file};
}

// In the forked child: async-signal-safe calls only (the parent has threads).
// Its stdout and stderr go to the log (`log_fd`, O_APPEND as dnsmasq's own writes): a start-up
// error (an address it cannot listen on) is printed there before its logging starts.
[[noreturn]] void ExecChild(pid_t parent, int netns_fd, int null_fd, int log_fd, const char* path,
                            char** argv, char** envp) {
  setpgid(0, 0);
  if (setns(netns_fd, CLONE_NEWNET) != 0) _exit(126);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(137);  // the parent died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  const int out = log_fd >= 0 ? log_fd : null_fd;
  dup2(null_fd, 0), dup2(out, 1), dup2(out, 2);
  execve(path, argv, envp);
  _exit(127);
}

std::string LastLine(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

bool LogSays(const std::string& file, const std::string& what) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().find(what) != std::string::npos;
}

}  // namespace

void Dnsmasq::Supervise(const std::string& path, const DnsmasqOptions& options, int netns_fd) {
  std::vector<std::string> args = Argv(path, options);
  std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  std::vector<char*> argv = process::CStrings(args);
  std::vector<char*> envp = process::CStrings(env);
  guard_ = options.guard;
  if (guard_ == nullptr) {
    own_guard_ = std::make_unique<process::OrphanGuard>();
    guard_ = own_guard_.get();
  }
  if (!guard_->ok()) {
    close(netns_fd);
    exited_ = true;
    forked_ = true;
    Settle(Status(Code::kUnavailable, "dnsmasq: no orphan guard"));
    return;
  }
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  int log_fd = open(options.log_file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    ExecChild(parent, netns_fd, null_fd, log_fd, path.c_str(), argv.data(), envp.data());
  }
  if (null_fd >= 0) close(null_fd);
  if (log_fd >= 0) close(log_fd);
  close(netns_fd);
  if (pid < 0) {
    Status why(Code::kUnavailable, std::string("fork dnsmasq: ") + strerror(errno));
    exited_ = true;
    forked_ = true;
    Settle(why);
    return;
  }
  guard_->Add(pid);
  pid_ = pid;
  forked_ = true;
  int st = 0;
  if (!AwaitStart(pid, options.log_file, &st)) {
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  guard_->Remove(pid);
  exited_ = true;
  std::string why = LastLine(options.log_file);
  Settle(Status(Code::kUnavailable, "dnsmasq exited" + (why.empty() ? "" : ": " + why)));
}

bool Dnsmasq::AwaitStart(pid_t pid, const std::string& log_file, int* st) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (true) {
    pid_t r = waitpid(pid, st, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      std::string why = LastLine(log_file);
      Settle(Status(Code::kUnavailable, "dnsmasq did not start" + (why.empty() ? "" : ": " + why)));
      return true;
    }
    if (LogSays(log_file, "started, version")) {
      Settle(Status::Ok());
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string why = LastLine(log_file);
      Settle(Status(Code::kUnavailable,
                    "dnsmasq did not start within 3 s" + (why.empty() ? "" : ": " + why)));
      kill(pid, SIGKILL);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The first call decides the state (a later exit of a serving dnsmasq changes nothing here).
void Dnsmasq::Settle(const Status& result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::kStarting) return;
    state_ = result.ok() ? State::kServing : State::kFailed;
    why_ = result;
  }
  if (on_settled_ && !stopping_) on_settled_(result);
  {
    std::lock_guard<std::mutex> lock(mu_);
    reported_ = true;
  }
  settled_.notify_all();
}

Dnsmasq::State Dnsmasq::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

Status Dnsmasq::WaitStarted() const {
  std::unique_lock<std::mutex> lock(mu_);
  settled_.wait(lock, [this] { return reported_; });
  return why_;
}

Result<std::unique_ptr<Dnsmasq>> Dnsmasq::Start(const DnsmasqOptions& options,
                                                OnSettled on_settled) {
  auto path = process::FindExecutable("dnsmasq", {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"});
  if (!path.ok()) return Status(Code::kUnavailable, "no dnsmasq (Debian's dnsmasq-base)");
  int netns_fd = open(options.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (netns_fd < 0) {
    return Status(Code::kUnavailable, options.netns_path + ": " + std::strerror(errno));
  }
  std::unique_ptr<Dnsmasq> d(new Dnsmasq());
  d->on_settled_ = std::move(on_settled);
  { std::ofstream(options.log_file, std::ios::trunc); }
  Dnsmasq* raw = d.get();
  std::string exe = *path;
  d->supervisor_ =
      std::thread([raw, exe, options, netns_fd] { raw->Supervise(exe, options, netns_fd); });
  return d;
}

Dnsmasq::~Dnsmasq() {
  stopping_ = true;
  while (!forked_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  pid_t pid = pid_;
  // SIGKILL: it keeps nothing to save (no cache file, no lease), and a SIGTERM waits for it
  // to be scheduled on a busy machine.
  if (pid > 0 && !exited_) kill(pid, SIGKILL);
  if (supervisor_.joinable()) supervisor_.join();
}

}  // namespace pjemu::network
