// The pjemu command line: `main.cc` calls Main, which parses argv with CLI11 against the
// kCommands[] table (cli.cc) and runs one command (one file per command, *_command.cc).
// Commands print to stdout/stderr and return an ExitCode; nothing else calls exit().
// Thread safety: Main runs on the process's main thread; commands may start their own threads
// (the embedded cluster's) and stop them before they return.
#pragma once

namespace pjemu::cli {

// The exit codes every command shares (`run` uses all of them).
enum class ExitCode {
  kOk = 0,            // every job Succeeded / the command did what was asked
  kFailed = 1,        // a job Failed, or the server refused a request (kubectl's exit 1)
  kInvalidInput = 2,  // bad flags, bad YAML, a validation error: nothing was started
  kTimeout = 3,       // --timeout passed before every job finished
  kInterrupted = 130, // SIGINT/SIGTERM: everything started was stopped first
};

// Parses argv, runs the command, returns the process exit status.
int Main(int argc, char** argv);

}  // namespace pjemu::cli
