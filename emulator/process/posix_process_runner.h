// PosixProcessRunner: runs containers as real local processes (fork + execvp, never a shell).
// Each process leads its own process group, gets PR_SET_PDEATHSIG(SIGKILL), and is registered
// with an OrphanGuard so that nothing it started survives the emulator, even a SIGKILLed one.
// One I/O thread polls the stdout/stderr pipes into CRI log files, reaps exits with
// waitpid(pid, WNOHANG) (only its own children), enforces memory limits by sampling the group's
// RSS from /proc, and posts each exit to the EventLoop.
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
#include <thread>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/event_loop.h"
#include "emulator/process/orphan_guard.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct PosixRunnerOptions {
  Duration poll_interval = 10ms;    // pipe poll timeout and reaping cadence
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
  // The processes that have not exited yet, as (pid, ProcessSpec::name): ResourceSampler's lister.
  std::vector<std::pair<Pid, std::string>> Live() const;

  const OrphanGuard& guard() const { return guard_; }

 private:
  struct Proc;
  void IoLoop();
  void PollPipes();
  void ReapAndMeasure(Time now, bool measure);

  EventLoop& loop_;
  PosixRunnerOptions options_;
  OrphanGuard guard_;
  mutable std::mutex mu_;
  std::map<Pid, std::unique_ptr<Proc>> procs_;  // GUARDED_BY(mu_)
  std::atomic<bool> stop_{false};
  std::atomic<bool> drop_callbacks_{false};
  int wake_[2] = {-1, -1};
  std::thread io_;
};

}  // namespace pjemu::process
