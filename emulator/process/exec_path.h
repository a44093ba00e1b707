// What the process runner and exec into a container share to prepare an exec. FindExecutable
// resolves a container's argv[0] the way a container runtime does, against the PATH of the
// container's own environment (not the emulator's), before anything is forked, so a missing
// program becomes a clear ContainerCannotRun message; CStrings makes execve's arrays; CloseFd.
// Thread safety: pure functions (FindExecutable reads the file system).
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::process {

// The PATH runc uses when the environment has none.
inline constexpr const char* kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The paths execvp would try for argv0 (which has no '/'), in order: each entry of the PATH in
// env (kDefaultPath when none) joined with argv0, an empty entry meaning ".".
std::vector<std::string> PathCandidates(const std::string& argv0,
                                        const std::vector<std::string>& env);

// argv0 itself when it contains '/', else the first executable PATH entry named argv0.
// kNotFound: `exec: "x": executable file not found in $PATH` (or `... no such file or directory`,
// `... permission denied` for an explicit path).
Result<std::string> FindExecutable(const std::string& argv0, const std::vector<std::string>& env);

// execve's argv/envp: pointers into v's strings (which must outlive the result), then nullptr.
std::vector<char*> CStrings(const std::vector<std::string>& v);

// An errno as Go (and so runc and containerd) words it: strerror in lower case ("no such file
// or directory"), for messages in the runtime's shape.
std::string ErrnoText(int err);

// Closes fd when it is open (>= 0) and sets it to -1.
void CloseFd(int& fd);

}  // namespace pjemu::process
