#include "emulator/process/simulated_process_runner.h"

#include <csignal>

#include "emulator/process/cri_log_writer.h"

namespace pjemu::process {

SimulatedOutcome DefaultScript(const ProcessSpec&) { return SimulatedOutcome{}; }

SimulatedProcessRunner::SimulatedProcessRunner(EventLoop& loop, SimulationScript script)
    : loop_(loop), script_(std::move(script)) {}

Result<Pid> SimulatedProcessRunner::Start(const ProcessSpec& spec, ExitCallback on_exit) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status(Code::kInvalid, "process " + spec.name + ": empty command");
  }
  ++started_;
  SimulatedOutcome outcome = script_(spec);
  Pid pid = next_pid_++;
  Proc& proc = procs_[pid];
  proc.on_exit = std::move(on_exit);
  proc.ignores_sigterm = outcome.ignores_sigterm;
  if (!outcome.output.empty()) {
    CriLogWriter log(loop_.clock(), spec.log_path);
    for (const auto& line : outcome.output) log.Write("stdout", line + "\n");
  }
  if (spec.memory_limit_bytes > 0 && outcome.peak_memory_bytes > spec.memory_limit_bytes) {
    proc.timers.push_back(loop_.PostAfter(
        outcome.runtime / 2, [this, pid] { Finish(pid, 128 + SIGKILL, SIGKILL, true); }));
  } else {
    int code = outcome.exit_code;
    proc.timers.push_back(
        loop_.PostAfter(outcome.runtime, [this, pid, code] { Finish(pid, code, 0, false); }));
  }
  return pid;
}

Status SimulatedProcessRunner::Signal(Pid pid, int sig) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) {
    return Status(Code::kNotFound, "process " + std::to_string(pid) + " has exited");
  }
  if (sig == SIGTERM && it->second.ignores_sigterm) return Status::Ok();
  if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT) {
    // Delivered asynchronously, like a real signal.
    it->second.timers.push_back(
        loop_.Post([this, pid, sig] { Finish(pid, 128 + sig, sig, false); }));
  }
  return Status::Ok();
}

void SimulatedProcessRunner::KillAll() {
  std::vector<Pid> pids;
  for (auto& [pid, proc] : procs_) pids.push_back(pid);
  for (Pid pid : pids) (void)Signal(pid, SIGKILL);
}

void SimulatedProcessRunner::Finish(Pid pid, int exit_code, int signal, bool oom) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  for (auto id : it->second.timers) loop_.Cancel(id);
  ExitCallback cb = std::move(it->second.on_exit);
  procs_.erase(it);
  ProcessExit exit{pid, exit_code, signal, oom, loop_.Now()};
  if (cb) cb(exit);
}

}  // namespace pjemu::process
