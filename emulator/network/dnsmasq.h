// Dnsmasq: one Debian dnsmasq (exec'd as argv, never through a shell) answering DNS inside a
// network namespace pjemu made (the pod network's bridge namespace) from a directory of hosts
// files that it re-reads on change (inotify: a file written elsewhere and renamed into the
// directory replaces its old records within milliseconds). It forwards nothing (--no-resolv,
// no servers: a pod has no route off the machine) and reads neither the host's /etc/hosts nor
// its resolv.conf; a name it has no record for is answered NXDOMAIN at once (`--address=/#/`,
// which the hosts files' records win over). Its log lines go to `log_file`.
// Lifetime: the process is forked by a thread of this object that waits for it, leads a process
// group of its own that an OrphanGuard of this object holds (its guardian SIGKILLs the group
// when pjemu dies, even SIGKILLed: PR_SET_PDEATHSIG alone did not survive dnsmasq's start-up,
// which changes its credentials), and dies with this object (the destructor sends SIGTERM, then
// SIGKILL after a second). It runs as root (--user=root) inside the bridge's namespace only.
// Thread safety: Start and the destructor from one thread; pid() from any.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
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
};

class Dnsmasq {
 public:
  // Starts dnsmasq and waits (up to 3 s) until it logs that it started (it listens by then).
  // kUnavailable with the reason when it is not installed, or it exits or does not start
  // (its log's last line).
  static Result<std::unique_ptr<Dnsmasq>> Start(const DnsmasqOptions& options);
  ~Dnsmasq();
  Dnsmasq(const Dnsmasq&) = delete;
  Dnsmasq& operator=(const Dnsmasq&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return !exited_; }

 private:
  Dnsmasq() = default;
  void Supervise(const std::string& path, const DnsmasqOptions& options, int netns_fd);

  std::atomic<pid_t> pid_{-1};  // -1 until forked; set once
  std::atomic<bool> exited_{false};
  std::atomic<bool> forked_{false};
  int fork_errno_ = 0;
  process::OrphanGuard guard_;  // forked before the supervisor thread
  std::thread supervisor_;
};

}  // namespace pjemu::network
