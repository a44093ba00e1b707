// StartInContainer: runs a command inside a running container, as a container runtime's exec
// does: a fresh process (its own session and process group, SIGKILLed if the emulator dies)
// that joins the container's UTS and mount namespaces and its root when the container has them
// (`enter_namespaces`, the sandbox of sandbox.h), its network and PID namespaces whenever they
// are not the emulator's (the PID one through a child: `ps` then shows the container's
// processes, `kill 1` signals the container's PID 1), enters its working directory and execs argv
// with the container's environment, argv[0] looked up in that environment's PATH inside the
// container. Same user as the container (the emulator's). The child makes only
// async-signal-safe calls; everything is prepared before the fork.
// Errors (before anything runs): kInvalid for an empty argv; kNotFound when the container's
// process is gone (`container not running`); then, reported by the child, kNotFound
// `exec: "x": executable file not found in $PATH` (or `no such file or directory` for an
// explicit path), kInvalid `chdir to cwd ("/x") ...`, kInternal for a namespace that cannot be
// joined or a failed fork/pipe/pty.
// Thread safety: StartInContainer may be called from any thread; see api::ExecProcess.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "emulator/api/exec.h"
#include "emulator/common/status.h"
#include "emulator/process/process_runner.h"

namespace pjemu::process {

struct ContainerExecSpec {
  Pid target = 0;                 // the container's process (its namespaces and root)
  bool enter_namespaces = false;  // join target's mount and UTS namespaces and its root
  std::vector<std::string> argv;
  std::vector<std::string> env;  // the container's complete environment, "NAME=value"
  std::string working_dir;       // "" = "/" inside namespaces, else the emulator's own
  bool with_stdin = false;
  bool tty = false;
};

Result<std::unique_ptr<api::ExecProcess>> StartInContainer(const ContainerExecSpec& spec);

}  // namespace pjemu::process
