// FindExecutable: resolves a container's argv[0] the way a container runtime does, against the
// PATH of the container's own environment (not the emulator's), before anything is forked, so
// a missing program becomes a clear ContainerCannotRun message.
// Thread safety: pure function over the file system.
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::process {

// The PATH runc uses when the environment has none.
inline constexpr const char* kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// argv0 itself when it contains '/', else the first executable PATH entry named argv0.
// kNotFound: `exec: "x": executable file not found in $PATH` (or `... no such file or directory`,
// `... permission denied` for an explicit path).
Result<std::string> FindExecutable(const std::string& argv0, const std::vector<std::string>& env);

}  // namespace pjemu::process
