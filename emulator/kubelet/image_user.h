// The identity a container from an image runs as, as runc and containerd settle it: the
// pod's and container's securityContext (runAsUser, runAsGroup, supplementalGroups) over the
// image config's User (`uid`, `name`, `uid:gid`, `name:group`, ...), names looked up in the
// image's own /etc/passwd and /etc/group (the topmost layer that has the file), the primary
// group and HOME from the passwd entry (gid 0 and HOME / when the user has none), and the
// user's supplementary groups from /etc/group. A name the image does not know is an error
// (`unable to find user app: no matching entries in passwd file`, runc's words).
// Thread safety: a function; reads the layers' files.
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/process/mount_plan.h"

namespace pjemu::kubelet {

struct ImageUser {
  process::Identity identity;
  std::string home;  // HOME for the environment unless the image or the container sets one
};

// layers: the image's layer directories, top first. pod/container: their JSON (for
// securityContext).
Result<ImageUser> ResolveImageUser(const std::vector<std::string>& layers,
                                   const std::string& image_user, const Json& pod,
                                   const Json& container);

}  // namespace pjemu::kubelet
