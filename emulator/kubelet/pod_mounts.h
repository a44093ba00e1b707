// Pod mounts: the filesystem one container sees, as a process::MountPlan (mount_plan.h) that
// the runner carries out in the container's own mount namespace. For a container of a pod:
//   - root: the host's / under a copy-on-write overlay, per container and restart:
//       <pod dir>/containers/<ctr>/<restart>/{root-upper,root-work,root}
//   - or, for an image from the store (MountInputs::root_layers), an overlay of its layers;
//   - the image map's files (ImagePlan::files, target -> host source): a directory as a
//     copy-on-write overlay (Mount::kOverlay) with upper/work in .../layers/<i>/{upper,work},
//     a single file as a bind of a private copy in .../layers/<i>/;
//   - /tmp: a bind of an empty per-container directory (.../tmp);
//   - /dev/shm: the pod's shared directory (/dev/shm/pjemu-<node>-<uid>/.shm, shared by its
//     containers as in a pod), unless a volume is mounted there (an emptyDir medium: Memory is
//     how people size it; its sizeLimit is enforced by eviction, not by the mount);
//   - each volumeMount: the volume's host path (or path/subPath) bound at mountPath, read-only
//     for readOnly; a subPath must stay inside its volume (no `..`, no symlink leading out); a
//     subPath of a configMap/secret volume binds the key's file itself (so, as in Kubernetes,
//     it is not updated when the object changes); a missing subPath is created as a directory;
//   - /etc/hosts: the pod's hosts file (EtcHosts), unless a volume is mounted there.
// Mounts are ordered by the depth of their target (stable), so a parent never hides a child.
// The working directory is the container's workingDir, else the image's, else "/".
// Thread safety: functions. PlanContainerMounts reads the filesystem (symlinks of subPaths) and
// creates a missing subPath directory; nothing else touches the host.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/kubelet/volumes.h"
#include "emulator/process/mount_plan.h"

namespace pjemu::kubelet {

struct MountInputs {
  std::string container_dir;                 // <pod dir>/containers/<ctr>/<restart>
  std::map<std::string, PodVolume> volumes;  // the pod's volumes, set up, by name
  std::string pod_shm;                       // the pod's shared /dev/shm directory
  std::string etc_hosts;                     // the pod's hosts file
  std::vector<std::pair<std::string, std::string>> image_files;  // target -> host source
  std::string image_working_dir;                                 // "" = none
  std::string hostname;  // the container's hostname (PodHostname)
  // Host files or folders the image map's programs live in (KubeletOptions::image_vars, e.g.
  // pjemu-trainer), bound read-only at the same paths: a checkout under /tmp would otherwise be
  // hidden by the container's own /tmp.
  std::vector<std::string> host_paths;
  // An image's root (ImagePlan::layers, top first): the container's / is made of them instead
  // of the host's, with the image's own /tmp (no private /tmp bind, no host_paths).
  std::vector<std::string> root_layers;
  std::vector<std::string> devices;  // host device nodes for an image root's /dev (GPUs)
  // Host files bound read-only into an image root: (host path, path inside) (GPU drivers).
  std::vector<std::pair<std::string, std::string>> driver_files;
  process::Identity user;            // the identity the process runs as
};

// A pod's hostname: spec.hostname, else its name, cut to 63 characters as the kubelet does.
std::string PodHostname(const Json& pod);

struct ContainerMounts {
  process::MountPlan plan;
  std::string working_dir;  // inside the container
  std::string home;         // an image root's user's home (image_user.h); "" otherwise
};

// The plan for `container` (its JSON; `field` = "spec.containers[0]" names it in errors).
// kInvalid, naming the field as API validation does, for a volumeMount naming no volume, a
// relative mountPath, or a subPath with `..`/absolute; kInvalid `failed to prepare subPath for
// volumeMount "x" of container "y"` (the kubelet's CreateContainerConfigError) for a subPath
// leaving its volume through a symlink.
Result<ContainerMounts> PlanContainerMounts(const Json& container, const std::string& field,
                                            const MountInputs& in);

// A Service line of /etc/hosts: ns/name resolving to ip.
struct HostsService {
  std::string ns;
  std::string name;
  std::string ip;
};

// The pod's /etc/hosts as the kubelet writes it (header, localhost lines, the pod's IP with its
// hostname, the FQDN `<hostname>.<subdomain>.<ns>.svc.cluster.local` first when spec.subdomain
// is set, hostAliases), then pjemu's stand-in for cluster DNS: one line per Service with a
// resolvable IP, listing `svc.ns svc.ns.svc svc.ns.svc.cluster.local` (and `svc` for Services of
// the pod's own namespace, as its DNS search path would).
std::string EtcHosts(const Json& pod, const std::string& pod_ip,
                     const std::vector<HostsService>& services);

// Rewrites a file in place (truncate + write, same inode): /etc/hosts is bind-mounted into
// running containers, so a rename would not reach them.
Status WriteInPlace(const std::string& path, const std::string& content);

}  // namespace pjemu::kubelet
