// Volumes: the kubelet's volume manager in small. Before a pod's first container starts, every
// volume of spec.volumes is set up on the host, in the kubelet's layout:
//   <pod dir>/volumes/kubernetes.io~<kind>/<name>/   emptyDir, configMap, secret, downwardAPI,
//                                                    projected
//   /dev/shm/pjemu-<node>-<uid>/<name>/              emptyDir with medium: Memory (the host's
//                                                    /dev/shm is a tmpfs; <node>: a hash of
//                                                    the kubelet's root_dir)
//   the path itself                                  hostPath (after its `type` check)
//   the bound PV's spec.hostPath.path / spec.local.path   persistentVolumeClaim
// configMap, secret, downwardAPI and projected contents are written by WriteAtomic, as the
// kubelet's atomic writer does: the files live in a timestamped `..<ts>` directory, `..data`
// is a symlink to it swapped with rename(2), and each visible top-level name is a symlink
// `name -> ..data/name`, so a reader sees either the old or the new set, never a mix. Calling
// SetUpVolume again rewrites changed contents (ConfigMap/Secret updates); unchanged ones are
// left alone.
// Errors are the kubelet's FailedMount messages: `MountVolume.SetUp failed for volume "cfg" :
// configmap "x" not found`, `hostPath type check failed: /x is not a directory`.
// The serviceAccountToken source of a projected volume is the token `tokens` fetches (the
// kubelet's TokenRequest); without one (no API server) a placeholder.
// Thread safety: functions; they touch only the directories they are given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"
#include "emulator/kubelet/container_env.h"  // ObjectLookup: the pod's ConfigMaps, Secrets, PVCs, PVs

namespace pjemu::kubelet {

// Where a pod's volumes live on the host.
struct PodVolumeDirs {
  std::string pod;  // <root>/pods/<ns>_<pod>_<uid>
  std::string shm;  // /dev/shm/pjemu-<node>-<uid>
};
PodVolumeDirs VolumeDirsOf(const std::string& root_dir, const Json& pod);

// A volume set up on the host.
struct PodVolume {
  std::string name;
  std::string kind;                   // the spec.volumes[] key: emptyDir, hostPath, configMap, ...
  std::string host_path;              // what a volumeMount binds
  bool memory = false;                // emptyDir medium: Memory
  std::string size_limit;             // emptyDir sizeLimit as written ("" = none)
  std::int64_t size_limit_bytes = 0;  // 0 = none
  bool atomic = false;  // written by WriteAtomic (configMap, secret, downwardAPI, projected)
};

// Sets up (or refreshes) one entry of spec.volumes. kUnavailable with the FailedMount message
// when an object it needs is missing (retry when it appears); kInvalid for a volume that cannot
// work as written (an unsupported kind, a hostPath of the wrong type, a bad base64 value).
// A projected serviceAccountToken source's token (its {audience, expirationSeconds, path}).
using TokenFetcher = std::function<Result<std::string>(const Json& source)>;
Result<PodVolume> SetUpVolume(const Json& pod, const Json& volume, const PodVolumeDirs& dirs,
                              const ObjectLookup& objects, const TokenFetcher* tokens = nullptr);

// Whether the volume's contents come from the ConfigMap (type configmaps) or Secret (secrets)
// of that name, directly or through a projected source.
bool VolumeReferences(const Json& volume, const std::string& plural, const std::string& name);

// Removes the pod's own volume directories (<pod>/volumes, and dirs.shm); hostPath and PV
// directories are left alone.
void TearDownVolumes(const PodVolumeDirs& dirs);

// Bytes used by the files under a directory (0 when it does not exist).
std::int64_t DirectoryUsage(const std::string& dir);

// The atomic writer. `files`: path relative to dir (may contain '/') -> contents and mode.
struct AtomicFile {
  std::string data;
  int mode = 0644;
};
// Writes the set into dir as described above; returns whether anything changed. Paths that are
// absolute or contain `..` are refused (kInvalid).
Result<bool> WriteAtomic(const std::string& dir, const std::map<std::string, AtomicFile>& files);

}  // namespace pjemu::kubelet
