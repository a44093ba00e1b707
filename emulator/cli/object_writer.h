// The loop that `pjemu create -f` and `pjemu apply -f` share: load the files, connect to
// `pjemu serve`, and run one write per object in file order, printing kubectl's lines.
// Thread safety: used from the main thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/cli/remote.h"
#include "emulator/common/status.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::cli {

// Writes one object (ns: its namespace, else the remote's) and returns what follows
// "<kind>/" on the success line, e.g. "pytorch-simple created".
using ObjectWrite =
    std::function<Result<std::string>(Remote& remote, const api::ResourceType& type,
                                      const std::string& ns, const manifest::Manifest& m)>;

// Returns the exit code: kInvalidInput when a file does not load or no server is found,
// kFailed when any object's write failed (printed as
// `Error from server (<Reason>): error when <doing> "<file>": <message>`), else kOk.
int WriteEachObject(const std::vector<std::string>& files, const RemoteFlags& flags,
                    std::string_view doing, const ObjectWrite& write);

}  // namespace pjemu::cli
