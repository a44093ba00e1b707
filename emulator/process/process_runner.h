// ProcessRunner: the seam between the kubelet and the operating system. The kubelet
// turns a container into a ProcessSpec (argv, full environment, working directory, CRI log file,
// memory limit) and starts it here; the runner reports the exit back on the EventLoop.
// Implementations: PosixProcessRunner (real fork/exec), SimulatedProcessRunner (virtual time,
// scripted exits), and tests/support's fakes.
// Thread safety: Start/Signal/KillAll are called from the EventLoop thread; exit callbacks run
// on the EventLoop thread, never inline inside Start.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/process/mount_plan.h"

namespace pjemu::process {

using Pid = int;

struct ProcessSpec {
  std::vector<std::string> argv;        // argv[0] is looked up in PATH (execvp) unless it has a '/'
  std::vector<std::string> env;         // the complete environment, "NAME=value"
  std::string working_dir;  // "" = the runner's current directory ("/" under a mount plan);
                            // under an enabled plan, a path inside the container
  std::string log_path;                 // CRI-format log file, appended ("" = output discarded)
  std::int64_t memory_limit_bytes = 0;  // 0 = none; over it the group is killed (OOMKilled)
  std::int64_t cpu_limit_millis = 0;    // 0 = none; a CFS quota where the runner has cgroups
  std::int64_t cpu_request_millis = 0;  // 0 = none; the cgroup's CPU weight (cgroups.h)
  std::string name;  // "<ns>/<pod>/<container>", for messages and simulation scripts
  MountPlan mounts;  // the container's filesystem (mount_plan.h); disabled = the host's
  // The process is PID 1 of a PID namespace of its own (PosixProcessRunner; needs an enabled
  // mount plan, whose fresh /proc then shows that namespace). As on a cluster: a signal without
  // a handler in it (SIGTERM, SIGINT) is ignored, Signal reaches it alone (not its group), and
  // when it exits the kernel kills everything left in the namespace.
  bool own_pid_namespace = false;
  // Joins the PID namespace whose PID 1 is this runner's process `pid_namespace_of` (a pod's
  // pause process, started with own_pid_namespace): the process is one of that namespace's,
  // not its PID 1, as the containers of a pod with shareProcessNamespace are; signals reach its
  // group as outside a namespace. 0 = none. Errors: kInternal when the namespace is gone.
  Pid pid_namespace_of = 0;
  // A network namespace to join before exec (the pod's, BridgeNetwork::AddPod); "" = the
  // runner's own.
  std::string netns_path;
};

struct ProcessExit {
  Pid pid = 0;
  int exit_code = 0;        // the exit status, or 128 + signal when killed by a signal
  int signal = 0;           // the terminating signal, 0 when it exited
  bool oom_killed = false;  // killed for exceeding memory_limit_bytes (exit_code 137), or the
                            // kernel's OOM killer killed a process of its cgroup
  Time finished_at{};
};

using ExitCallback = std::function<void(const ProcessExit&)>;

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Starts the process in a new process group (pgid == pid). on_exit is posted to the EventLoop
  // once the process has exited and its output is in the log file.
  // Errors: kNotFound when argv[0] cannot be found or executed (message in the container
  // runtime's shape: `exec: "x": executable file not found in $PATH`), kInvalid for an empty
  // argv or a working directory that does not exist, kInternal for fork/pipe failures.
  // Under an enabled mount plan (PosixProcessRunner): kInvalid for a plan mount that fails
  // (`error mounting "/src" to rootfs at "/dst": no such file or directory`), kInternal when
  // the container's root cannot be set up (sandbox.h; SandboxAvailable() says beforehand).
  virtual Result<Pid> Start(const ProcessSpec& spec, ExitCallback on_exit) = 0;
  // Sends sig to the whole process group of a running process (to the process alone when it is
  // PID 1 of its own namespace, as a container runtime signals a container's init).
  // kNotFound once it has exited.
  virtual Status Signal(Pid pid, int sig) = 0;
  // SIGKILLs every process group still running (emulator shutdown). Exits are still reported.
  virtual void KillAll() = 0;
  // Number of started processes whose exit has not been reported yet.
  virtual std::size_t running() const = 0;
  // Whether Start runs real processes (false: scripted ones in virtual time, which get no
  // sandbox, network or exec). A decorator answers for what it wraps.
  virtual bool real() const = 0;
};

}  // namespace pjemu::process
