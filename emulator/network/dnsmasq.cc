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
[[noreturn]] void ExecChild(pid_t parent, int netns_fd, int null_fd, const char* path,
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
  dup2(null_fd, 0), dup2(null_fd, 1), dup2(null_fd, 2);
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
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) ExecChild(parent, netns_fd, null_fd, path.c_str(), argv.data(), envp.data());
  if (null_fd >= 0) close(null_fd);
  close(netns_fd);
  if (pid < 0) {
    fork_errno_ = errno;
    exited_ = true;
    forked_ = true;
    return;
  }
  guard_.Add(pid);
  pid_ = pid;
  forked_ = true;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  guard_.Remove(pid);
  exited_ = true;
}

Result<std::unique_ptr<Dnsmasq>> Dnsmasq::Start(const DnsmasqOptions& options) {
  auto path = process::FindExecutable("dnsmasq", {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"});
  if (!path.ok()) return Status(Code::kUnavailable, "no dnsmasq (Debian's dnsmasq-base)");
  int netns_fd = open(options.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (netns_fd < 0) {
    return Status(Code::kUnavailable, options.netns_path + ": " + std::strerror(errno));
  }
  std::unique_ptr<Dnsmasq> d(new Dnsmasq());
  if (!d->guard_.ok()) return Status(Code::kUnavailable, "dnsmasq: no orphan guard");
  { std::ofstream(options.log_file, std::ios::trunc); }
  Dnsmasq* raw = d.get();
  std::string exe = *path;
  d->supervisor_ = std::thread([raw, exe, options, netns_fd] {
    raw->Supervise(exe, options, netns_fd);
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    if (d->exited_ || LogSays(options.log_file, "started, version")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (d->fork_errno_ != 0) {
    return Status(Code::kUnavailable, std::string("fork dnsmasq: ") + strerror(d->fork_errno_));
  }
  if (d->exited_ || !LogSays(options.log_file, "started, version")) {
    std::string why = LastLine(options.log_file);
    return Status(Code::kUnavailable, "dnsmasq did not start" + (why.empty() ? "" : ": " + why));
  }
  return d;
}

Dnsmasq::~Dnsmasq() {
  while (!forked_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  pid_t pid = pid_;
  if (pid > 0 && !exited_) {
    kill(pid, SIGTERM);
    for (int i = 0; i < 1000 && !exited_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!exited_) kill(pid, SIGKILL);
  }
  if (supervisor_.joinable()) supervisor_.join();
}

}  // namespace pjemu::network
