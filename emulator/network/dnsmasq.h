// Dnsmasq: one Debian dnsmasq (exec'd as argv, never through a shell) answering DNS inside a
// network namespace pjemu made (the pod network's bridge namespace) from a directory of hosts
// files that it re-reads on change (inotify: a file written elsewhere and renamed into the
// directory replaces its old records within milliseconds). It forwards nothing (--no-resolv,
// no servers: a pod has no route off the machine) and reads neither the host's /etc/hosts nor
// its resolv.conf; a name it has no record for is answered NXDOMAIN at once (`--address=/#/`,
// which the hosts files' records win over). Its log lines, and its stdout and stderr, go to
// `log_file`.
// Start does not wait for dnsmasq: state() says when it answers (it logged that it started) or
// failed, so that a caller holds only what needs answers (the kubelet holds a pod's containers,
// not the cluster's start).
// Lifetime: the process is forked by a thread of this object that waits for it, leads a process
// group of its own that an OrphanGuard holds (options.guard, else one of its own: the guardian
// SIGKILLs the group when pjemu dies, even SIGKILLed: PR_SET_PDEATHSIG alone did not survive
// dnsmasq's start-up, which changes its credentials), and dies with this object (the destructor
// sends SIGKILL and waits for the exit). It runs as root (--user=root) inside the bridge's
// namespace only.
// Thread safety: Start and the destructor from one thread; pid(), running(), state() and
// WaitStarted() from any.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "emulator/common/status.h"
#include "emulator/process/orphan_guard.h"

namespace pjemu::network {

struct DnsmasqOptions {
  std::string netns_path;      // /run/netns/<ns>: where it listens
  std::string listen_address;  // an address of that namespace
  std::string hosts_dir;       // --hostsdir
  std::string log_file;
  // Holds dnsmasq's process group (e.g. the process runner's guard, which must outlive the
  // Dnsmasq); nullptr: a guard of its own, forked by the supervising thread.
  process::OrphanGuard* guard = nullptr;
};

class Dnsmasq {
 public:
  // Called once, on the supervising thread, when dnsmasq answers (Ok) or will not (kUnavailable:
  // it exited, or logged no start within 3 s, with its log's last line); not called when the
  // object goes first.
  using OnSettled = std::function<void(const Status&)>;
  // Forks dnsmasq (and its orphan guard) on a thread of its own and returns at once (it answers
  // within milliseconds to a few hundred under load: see state()). kUnavailable at once when it
  // is not installed or the namespace cannot be opened; later (OnSettled, WaitStarted) when
  // the guard or the fork fails.
  static Result<std::unique_ptr<Dnsmasq>> Start(const DnsmasqOptions& options,
                                                OnSettled on_settled = {});
  ~Dnsmasq();
  Dnsmasq(const Dnsmasq&) = delete;
  Dnsmasq& operator=(const Dnsmasq&) = delete;

  enum class State { kStarting, kServing, kFailed };
  State state() const;
  // Blocks until it answers (Ok) or will not (the reason, as given to OnSettled, which has
  // returned by then).
  Status WaitStarted() const;
  pid_t pid() const { return pid_; }
  bool running() const { return !exited_; }

 private:
  Dnsmasq() = default;
  void Supervise(const std::string& path, const DnsmasqOptions& options, int netns_fd);
  // Polls the log (every 2 ms, up to 3 s) until it says started or the process exits; true when
  // it exited (its status in *st).
  bool AwaitStart(pid_t pid, const std::string& log_file, int* st);
  void Settle(const Status& result);

  std::atomic<pid_t> pid_{-1};  // -1 until forked; set once
  std::atomic<bool> exited_{false};
  std::atomic<bool> forked_{false};
  std::atomic<bool> stopping_{false};  // the destructor began: no OnSettled any more
  OnSettled on_settled_;
  mutable std::mutex mu_;
  mutable std::condition_variable settled_;
  State state_ = State::kStarting;  // GUARDED_BY(mu_)
  Status why_ = Status::Ok();       // GUARDED_BY(mu_): the failure's reason
  bool reported_ = false;           // GUARDED_BY(mu_): settled and OnSettled returned
  // options.guard, else own_guard_, made by the supervisor thread before it forks dnsmasq (the
  // guardian's fork is off Start's path); set once, before forked_.
  process::OrphanGuard* guard_ = nullptr;
  std::unique_ptr<process::OrphanGuard> own_guard_;
  std::thread supervisor_;
};

}  // namespace pjemu::network
