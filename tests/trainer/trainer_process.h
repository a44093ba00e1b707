// Test helper: runs pjemu-trainer as a child process (env overrides, output to a file), waits
// with a bound, and reads its output. Thread safety: use from the test thread.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace pjemu::trainer::testing {

// The built binary: PJEMU_BINARY_DIR/bin/pjemu-trainer.
std::string TrainerPath();

struct Child {
  pid_t pid = -1;
  std::string out;  // stdout and stderr go here
};

// An env value that sets the variable to the empty string (an empty value unsets it).
inline constexpr char kEmptyValue[] = "<empty>";

// Starts pjemu-trainer with args; env entries are set (empty value: unset; kEmptyValue: set to
// "") on top of ours, with RANK/WORLD_SIZE/MASTER_* removed unless given.
Child Start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& out_path);

// The exit code (128 + signal when killed), or -1 when it ran past timeout_s (then killed).
int Wait(Child& c, double timeout_s);

// Waits until the output file contains `text`; false after timeout_s.
bool WaitForText(const Child& c, const std::string& text, double timeout_s);

std::string ReadFile(const std::string& path);
std::vector<std::string> Lines(const std::string& text);

// A TCP port nothing listens on right now (bound, then closed).
int FreePort();

}  // namespace pjemu::trainer::testing
