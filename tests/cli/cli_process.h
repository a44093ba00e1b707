// Test helper: runs the pjemu binary as a subprocess (as a user would), capturing its exit code,
// stdout and stderr, with a wall-clock limit; and finds processes by an environment marker, to
// prove that nothing a run started is left behind.
// Thread safety: call from the test thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace pjemu::testing {

struct CliResult {
  int exit_code = -1;  // -1 when it had to be killed at the limit
  std::string out;
  std::string err;
};

// Path of the pjemu binary under test (PJEMU_BINARY_DIR/bin/pjemu).
std::string PjemuBinary();

// A running pjemu whose output goes to files, for tests that signal it while it runs.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args);
  ~CliProcess();  // kills it (SIGKILL) if still running
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits for the exit; -1 when the limit passes (the process is then killed).
  int Wait(std::chrono::milliseconds limit);
  std::string Out() const;
  std::string Err() const;

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  int exit_code_ = -2;
};

// Runs pjemu with args and waits for it.
CliResult RunPjemu(const std::vector<std::string>& args,
                   std::chrono::milliseconds limit = std::chrono::seconds(60));

// Pids of the live processes whose environment contains `marker` (NAME=VALUE).
std::vector<pid_t> ProcessesWithEnv(const std::string& marker);
// A fresh directory under the build tree for one test.
std::string TempDir(const std::string& name);
// Writes text to dir/name and returns the path.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace pjemu::testing
