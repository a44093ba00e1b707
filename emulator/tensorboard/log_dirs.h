// Where a TensorBoard's log dirs are on this machine: its spec (tensorstack.dev/v1beta1, T9k's
// TensorBoardSpec) names them, this resolves each to a host folder that the console reads
// event files from. Forms:
//   spec.trainingLogFilesets: ["t9k://pvc/<claim>/<sub/path>", ...]   (T9k's older form)
//   spec.logDir.pvc: [{name: <claim>, subPath: ["<sub/path>", ...]}]  (T9k's current form)
//   spec.logDir.hostPath: [{path: "/abs/folder"}]                      (pjemu's own, a host folder)
// A claim resolves through its bound PersistentVolume's host folder (spec.hostPath.path or
// spec.local.path, api::VolumeHostPath: the local-path provisioner's folders), then the sub-path
// under it. A sub-path must be relative with no ".." component, and the folder it names (with
// symbolic links resolved, as far as it exists) must stay inside the volume: else the spec is
// refused. The folder itself need not exist yet (the job writes it later).
// `t9k://minio/...`, logDir.s3 and logDir.http (object storage, web servers) are refused: pjemu
// has neither.
// Thread safety: pure functions (ResolveLogDirs reads the file system's symbolic links).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::tensorboard {

struct LogDirSource {
  std::string field;     // "spec.logDir.pvc[0].subPath[1]": where the spec names it
  std::string source;    // "t9k://pvc/tutorial/log", "pvc/tutorial/log", "/srv/logs"
  std::string claim;     // the PersistentVolumeClaim, or "" for a host folder
  std::string sub_path;  // under the claim's volume ("" = its root)
  std::string host_path; // a host folder (claim == "")
};

// The log dirs the spec names, in spec order: kInvalid naming the field for a malformed or
// unsupported entry, or for a spec that names none.
Result<std::vector<LogDirSource>> ParseLogDirs(const Json& spec);

struct ResolvedLogDir {
  std::string source;  // as LogDirSource::source
  std::string path;    // the host folder
};

// The claim (namespace-local) by name, the volume by name; null when absent.
using ObjectByName = std::function<const Json*(const std::string& name)>;

// Each source's host folder: kUnavailable while a claim is missing or not Bound, or its volume
// missing (the message names them); kInvalid when a volume has no host folder or a sub-path
// escapes it.
Result<std::vector<ResolvedLogDir>> ResolveLogDirs(const std::vector<LogDirSource>& sources,
                                                   const ObjectByName& claims,
                                                   const ObjectByName& volumes);

}  // namespace pjemu::tensorboard
