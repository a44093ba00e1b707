// MountPlan: the filesystem a container's process sees, as the kubelet decides it and the
// runner carries it out. The kubelet (emulator/kubelet/pod_mounts.h) turns a pod's volumes,
// the image's files and the pod's /etc/hosts into a plan; PosixProcessRunner applies it in the
// forked child, in a mount namespace of the process's own, before exec. Nothing here touches
// the host's mount namespace, so nothing is left mounted when the process tree is gone.
//
// The container's root is a copy-on-write overlay whose upper layer is `root_upper` (writes to
// the root land there, never on the host or the image) over either
//  - the host's `/` (root_layers empty: an image map's route): the host's /proc, /dev and /sys
//    and its other mounts appear as on the host (other mounts read-only); or
//  - an image's layers (root_layers, top first, as overlayfs's lowerdir lists them): nothing of
//    the host but a fresh /proc, /sys read-only, and a /dev of its own (a tmpfs with null, zero,
//    full, random, urandom, tty bound from the host, a private devpts, the fd/std* links, and
//    `devices`), as a container runtime gives it;
// then `mounts` are applied in order, each target a path inside the container (parents created
// in the root's upper layer as needed). `user`, when set, is the identity the process runs as
// (set after the mounts, before the working directory is entered).
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

// The identity a container's process runs as (the image's User, or securityContext).
struct Identity {
  bool set = false;  // false: the runner's own
  unsigned uid = 0;
  unsigned gid = 0;
  std::vector<unsigned> groups;  // supplementary groups
};

struct MountPlan {
  // false: the process runs in the runner's own mount namespace and `working_dir` is a host
  // path, as before the plan existed (simulated pods, or a host without mount namespaces).
  bool enabled = false;
  std::string root_upper;  // host directories for the root's overlay (same filesystem)
  std::string root_work;
  std::string root_merged;  // host directory where the new root is assembled (empty dir)
  std::vector<Mount> mounts;
  // An image's root: its layers' host directories, top first; empty = the host's `/`.
  std::vector<std::string> root_layers;
  // Host device nodes bound at the same path in an image root's /dev (a GPU's /dev/nvidia0).
  std::vector<std::string> devices;
  Identity user;
  // The container's hostname, in a UTS namespace of its own (a pod's hostname is its name, or
  // spec.hostname): what gethostname() returns, which torch's c10d rendezvous compares with its
  // endpoint to decide which agent hosts the store. "" = the host's.
  std::string hostname;
};

}  // namespace pjemu::process
