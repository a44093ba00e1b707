// PosixProcessRunner: runs containers as real local processes (fork + execvp, never a shell).
// Each process leads its own process group, gets PR_SET_PDEATHSIG(SIGKILL), and is registered
// with an OrphanGuard so that nothing it started survives the emulator, even a SIGKILLed one.
// One I/O thread polls the stdout/stderr pipes into CRI log files, reaps exits with
// waitpid(pid, WNOHANG) (only its own children), and posts each exit to the EventLoop. Limits:
// each process in a cgroup of its own where the host allows (cgroups.h: the kernel enforces
// memory and CPU), else the memory limit by sampling the group's RSS from /proc.
// With an enabled ProcessSpec::mounts the child enters the container's filesystem before exec
// (sandbox.h: its own mount namespace, root overlay, the plan's mounts, pivot_root); argv[0]
// and the working directory are then resolved inside it, and a mount that fails is a Start
// error in runc's words. The pid, process group and PDEATHSIG are the same with or without.
// Thread safety: Start/Signal/KillAll from the EventLoop thread (see ProcessRunner); the
// PDEATHSIG is tied to the forking thread, so that thread must live as long as the processes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/event_loop.h"
#include "emulator/process/cgroups.h"
#include "emulator/process/orphan_guard.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct PosixRunnerOptions {
  Duration poll_interval = 10ms;    // pipe poll timeout and reaping cadence
  // Each process in a cgroup of its own (cgroups.h) where CgroupRoot::Open succeeds: the kernel
  // enforces the memory limit (OOMKilled from its oom_kill counter) and the CPU limit and
  // request. Without (false, or a host that cannot): the memory limit by RSS sampling below.
  bool cgroups = true;
  Duration memory_interval = 50ms;  // how often RSS is sampled for processes with a limit
  Duration drain_timeout = 500ms;   // how long output is read after the exit before reporting
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  // The clock stamps log lines and exits; loop receives the exit callbacks.
  PosixProcessRunner(EventLoop& loop, PosixRunnerOptions options = {});
  ~PosixProcessRunner() override;  // KillAll, then waits for the exits (callbacks are dropped)

  Result<Pid> Start(const ProcessSpec& spec, ExitCallback on_exit) override;
  Status Signal(Pid pid, int sig) override;
  void KillAll() override;
  std::size_t running() const override;
  bool real() const override { return true; }
  // The processes that have not exited yet, as (pid, ProcessSpec::name): ResourceSampler's lister.
  std::vector<std::pair<Pid, std::string>> Live() const;
  // The kernel's figures for a running process's cgroup; nullopt without cgroups or once it
  // has exited. ResourceSampler's reader.
  std::optional<CgroupUsage> CgroupUsageOf(Pid pid) const;
  // Ok when processes get cgroups; else why not (options.cgroups false, or CgroupRoot::Open's
  // kUnavailable).
  const Status& cgroups_status() const { return cgroups_status_; }

  const OrphanGuard& guard() const { return guard_; }
  // For a helper process of the emulator's own to be held too (network::Dnsmasq).
  OrphanGuard& guard() { return guard_; }

 private:
  struct Proc;
  void IoLoop();
  void PollPipes();
  void ReapAndMeasure(Time now, bool measure);
  // Removes the cgroups of exited processes, SIGKILLing what is left in them (a process that
  // left its group); those still busy are retried at the next pass. Under mu_.
  void RemoveCgroups();

  EventLoop& loop_;
  PosixRunnerOptions options_;
  OrphanGuard guard_;
  std::shared_ptr<CgroupRoot> cgroups_;
  Status cgroups_status_ = Status::Ok();
  mutable std::mutex mu_;
  std::vector<ContainerCgroup> dead_cgroups_;   // GUARDED_BY(mu_)
  std::map<Pid, std::unique_ptr<Proc>> procs_;  // GUARDED_BY(mu_)
  std::atomic<bool> stop_{false};
  std::atomic<bool> drop_callbacks_{false};
  int wake_[2] = {-1, -1};
  std::thread io_;
};

}  // namespace pjemu::process
