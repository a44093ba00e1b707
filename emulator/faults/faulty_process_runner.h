// FaultyProcessRunner: a process::ProcessRunner decorator that lets faults reach the containers
// the kubelet started: kill a process group with a signal, make it end with a chosen
// exit code, or hang it with SIGSTOP (a stuck peer). Sits between the kubelet and the real or
// simulated runner; processes are found by the spec name "<ns>/<pod>/<container>".
// Thread safety: EventLoop thread only, like every ProcessRunner caller.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/process/process_runner.h"

namespace pjemu::faults {

// A running process as the decorator knows it.
struct RunningProcess {
  process::Pid pid = 0;
  std::string ns, pod, container;
};

class FaultyProcessRunner final : public process::ProcessRunner {
 public:
  // inner must outlive this decorator.
  explicit FaultyProcessRunner(process::ProcessRunner& inner) : inner_(inner) {}

  Result<process::Pid> Start(const process::ProcessSpec& spec,
                             process::ExitCallback on_exit) override;
  Status Signal(process::Pid pid, int sig) override { return inner_.Signal(pid, sig); }
  void KillAll() override { inner_.KillAll(); }
  std::size_t running() const override { return inner_.running(); }
  bool real() const override { return inner_.real(); }

  // Running processes of pod ns/pod (container "" = every container), in start order.
  std::vector<RunningProcess> Find(std::string_view ns, std::string_view pod,
                                   std::string_view container = "") const;
  // Sends sig to each process of the pod; kNotFound when the pod has no running process.
  Status Kill(std::string_view ns, std::string_view pod, int sig, std::string_view container = "");
  // SIGSTOPs the pod's processes: they stay "running" but make no progress.
  Status Hang(std::string_view ns, std::string_view pod, std::string_view container = "");
  // Ends the pod's processes so that their exit is reported as `exit_code` (not a signal):
  // the process is SIGKILLed and its exit rewritten, as if it had called exit(exit_code).
  Status ExitWith(std::string_view ns, std::string_view pod, int exit_code,
                  std::string_view container = "");
  // Ends the pod's processes as the kernel's OOM killer would inside a container at its memory
  // limit: SIGKILL, reported as OOMKilled with exit code 137.
  Status OomKill(std::string_view ns, std::string_view pod, std::string_view container = "");
  // Process group ids of every process started through this decorator (for the "no process
  // left behind" check once the cluster stopped).
  const std::vector<process::Pid>& started() const { return started_; }
  // Faults acted out so far (kills, hangs, exits), for reports.
  int acted() const { return acted_; }

 private:
  process::ProcessRunner& inner_;
  std::map<process::Pid, RunningProcess> procs_;
  struct Override {
    int exit_code = 0;
    bool oom = false;
  };
  std::map<process::Pid, Override> exit_override_;
  std::vector<process::Pid> started_;
  int acted_ = 0;
};

}  // namespace pjemu::faults
