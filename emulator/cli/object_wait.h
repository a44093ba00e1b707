// What `pjemu wait` and `pjemu delete --wait` share: the connection plus --timeout preamble, the
// objects named by -f FILE or TYPE NAME... / TYPE/NAME..., and waiting on one object through a
// client::Informer (kubectl's UntilWithSync: list by metadata.name, then watch from that
// resourceVersion, re-watching when the watch ends and relisting when it expires or breaks)
// rather than polling.
// Thread safety: used from the main thread; the watch's reader thread is internal.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/cli/remote.h"

namespace pjemu::cli {

// A connected client plus the parsed --timeout. On error prints kubectl's `error: ...` line
// and returns nullopt (the command exits kInvalidInput).
struct TimedRemote {
  Remote remote;
  Duration timeout{0};
};
std::optional<TimedRemote> ConnectWithTimeout(const RemoteFlags& flags,
                                              const std::string& timeout_text);

struct Target {
  ObjectRef ref;
  std::string ns;
  std::string source;  // the manifest file ("" for names from the command line)
};
// The objects of the -f files (each in its manifest's namespace, else default_ns), or those
// named by args. Errors are the message for kubectl's `error: ...` line.
Result<std::vector<Target>> ResolveTargets(const std::vector<std::string>& files,
                                           const std::vector<std::string>& args,
                                           const std::string& default_ns);

// Waits until done(object) holds, where object is nullptr while the object does not exist.
// Ok when it held, kTimeout at the deadline, another Status when the server refused.
Status WaitForObject(client::Client& client, const Target& target,
                     const std::function<bool(const Json*)>& done,
                     std::chrono::steady_clock::time_point deadline);

}  // namespace pjemu::cli
