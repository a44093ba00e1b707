// MountPlan: the filesystem a container's process sees, as the kubelet decides it and the
// runner carries it out. The kubelet (emulator/kubelet/pod_mounts.h) turns a pod's volumes,
// the image's files and the pod's /etc/hosts into a plan; PosixProcessRunner applies it in the
// forked child, in a mount namespace of the process's own, before exec. Nothing here touches
// the host's mount namespace, so nothing is left mounted when the process tree is gone.
//
// The container's root is the host's `/` under a copy-on-write overlay whose upper layer is
// `root_upper` (writes to the root land there, never on the host); the host's /proc, /dev and
// /sys and its other mounts appear as on the host (other mounts read-only); then `mounts` are
// applied in order, each target a path inside the container (parents created in the root's
// upper layer as needed).
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pjemu::process {

struct Mount {
  enum class Kind {
    kBind,     // source (host file or directory) at target; read_only as asked
    kOverlay,  // copy-on-write: source (host directory, never written) as the lower layer,
               // upper/work (host directories on one filesystem) take the writes
    kTmpfs,    // an empty tmpfs of size_bytes (0 = the kernel's default, half of RAM)
  };
  Kind kind = Kind::kBind;
  std::string source;
  std::string target;  // absolute, normalized, inside the container
  std::string upper;   // kOverlay
  std::string work;    // kOverlay
  bool read_only = false;
  std::int64_t size_bytes = 0;  // kTmpfs
};

struct MountPlan {
  // false: the process runs in the runner's own mount namespace and `working_dir` is a host
  // path, as before the plan existed (simulated pods, or a host without mount namespaces).
  bool enabled = false;
  std::string root_upper;  // host directories for the root's overlay (same filesystem)
  std::string root_work;
  std::string root_merged;  // host directory where the new root is assembled (empty dir)
  std::vector<Mount> mounts;
  // The container's hostname, in a UTS namespace of its own (a pod's hostname is its name, or
  // spec.hostname): what gethostname() returns, which torch's c10d rendezvous compares with its
  // endpoint to decide which agent hosts the store. "" = the host's.
  std::string hostname;
};

}  // namespace pjemu::process
