// Ctrl-C handling for the long-running commands (`run`, `serve`, `logs -f`): SIGINT and SIGTERM
// set a flag that the command's loop polls, so that the command stops everything it started
// before it exits (no process is left behind). A second signal while stopping is ignored.
// Thread safety: the flag is a lock-free atomic, safe in a signal handler and from any thread.
#pragma once

namespace pjemu::cli {

// Installs the handlers (idempotent).
void InstallStopSignals();
// The signal received (SIGINT/SIGTERM), or 0.
int StopSignal();

}  // namespace pjemu::cli
