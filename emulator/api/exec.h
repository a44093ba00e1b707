// PodExec: running a command inside a container, between the kubelet (which knows the
// container's process, environment, working directory and namespaces) and the API server
// (which serves pods/exec over WebSocket). As `kubectl exec` does, the command is an argv (no
// shell unless it names one) run with the container's environment, working directory, user and
// filesystem (its mount and UTS namespaces when the container has them).
// Thread safety: implementations are safe to call from any thread; an ExecProcess is used by
// one owner, but Kill may be called from another thread than Wait.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

struct ExecRequest {
  std::string ns;
  std::string pod;
  std::string container;             // "" = the pod's only container
  std::vector<std::string> command;  // argv, at least one element
  bool with_stdin = false;           // give the process a pipe for stdin (else /dev/null)
  bool tty = false;                  // a pseudo-terminal for stdin/stdout (stderr merged)
};

// A started command. The pipes are owned by the ExecProcess (closed by its destructor).
class ExecProcess {
 public:
  virtual ~ExecProcess() = default;
  virtual int stdin_fd() const = 0;   // write end; -1 without stdin
  virtual int stdout_fd() const = 0;  // read end (the pty's master with tty)
  virtual int stderr_fd() const = 0;  // read end; -1 with tty
  // Closes stdin (the client's end of input). Idempotent.
  virtual void CloseStdin() = 0;
  // Blocks until the process exits: its exit code, or 128 + signal when killed by one.
  virtual int Wait() = 0;
  // SIGKILLs the process (its group) if it still runs. Idempotent.
  virtual void Kill() = 0;
  // A new terminal size (tty only; ignored otherwise).
  virtual void Resize(int width, int height) = 0;
};

class PodExec {
 public:
  virtual ~PodExec() = default;
  // Starts request.command in the running container. Errors: kNotFound for an unknown pod;
  // kBadRequest `container X is not valid for pod Y`; kInternal `container not found ("X")`
  // when it does not run (the real kubelet's words); kNotFound / kInvalid for a command that
  // cannot start (`exec: "x": executable file not found in $PATH`).
  virtual Result<std::unique_ptr<ExecProcess>> Exec(const ExecRequest& request) = 0;
  // Exec's checks of the pod and container, starting nothing: the API server answers them as
  // HTTP errors before it upgrades the connection (the command's own errors come later, on
  // the error channel).
  virtual Status Check(const ExecRequest& request) = 0;
  // The pod's network namespace (a path to open and setns into) when it has one of its own:
  // where pods/portforward dials the pod's ports. "" = the host's network (the default).
  virtual std::string NetworkNamespace(const std::string& ns, const std::string& pod) {
    (void)ns, (void)pod;
    return "";
  }
};

}  // namespace pjemu::api
