// SimulatedProcessRunner: the ProcessRunner for virtual-time runs (scenarios, fast tests).
// Nothing is executed: each started process "runs" for a scripted virtual duration, writes its
// scripted output lines to the CRI log, and exits with a scripted code, all as EventLoop timers.
// Signals follow POSIX defaults (SIGTERM/SIGKILL end the process with 128 + n) unless the
// script says the process ignores SIGTERM; a memory limit below the scripted peak memory
// ends it as OOMKilled. ProcessSpec::mounts is ignored: nothing runs, so there is no filesystem
// to see (a mount plan's errors only show up under PosixProcessRunner).
// Thread safety: EventLoop thread only.
#pragma once

#include <functional>
#include <map>

#include "emulator/common/event_loop.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct SimulatedOutcome {
  Duration runtime = 1s;
  int exit_code = 0;
  bool ignores_sigterm = false;
  std::int64_t peak_memory_bytes = 0;  // reached at half the runtime
  std::vector<std::string> output;     // stdout lines, written at start
};

// Decides what a process does from its spec (argv, env, name). The default script
// (DefaultScript) runs every process for 1 s and exits 0.
using SimulationScript = std::function<SimulatedOutcome(const ProcessSpec&)>;
SimulatedOutcome DefaultScript(const ProcessSpec& spec);

class SimulatedProcessRunner final : public ProcessRunner {
 public:
  explicit SimulatedProcessRunner(EventLoop& loop, SimulationScript script = DefaultScript);

  Result<Pid> Start(const ProcessSpec& spec, ExitCallback on_exit) override;
  Status Signal(Pid pid, int sig) override;
  void KillAll() override;
  std::size_t running() const override { return procs_.size(); }
  bool real() const override { return false; }

  // How many processes were started so far (a count: a run of thousands of pods keeps no spec
  // once its process ends).
  std::size_t started() const { return started_; }

 private:
  struct Proc {
    ExitCallback on_exit;
    std::vector<EventLoop::TimerId> timers;
    bool ignores_sigterm = false;
  };
  void Finish(Pid pid, int exit_code, int signal, bool oom);

  EventLoop& loop_;
  SimulationScript script_;
  std::map<Pid, Proc> procs_;
  std::size_t started_ = 0;
  Pid next_pid_ = 1000;
};

}  // namespace pjemu::process
