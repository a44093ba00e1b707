// Named network namespaces, made and removed in process as iproute2's `ip netns add/delete` do
// (and compatible with them: `ip netns exec/list/delete` see ours, we see theirs): a named
// namespace is a file /run/netns/<name> onto which a namespace's /proc/.../ns/net is
// bind-mounted, which keeps the namespace alive with no process in it; /run/netns is made a
// shared mount point (as ip does), so that removing the file unmounts it in the mount namespaces
// of containers made since, and the kernel frees the namespace once nothing else holds it.
// setns(2) and unshare(CLONE_NEWNET) act on the calling thread only: every function that enters
// a namespace does so on a short-lived thread of its own, so the caller never leaves the
// namespace it is in (the host's, for every thread of pjemu).
// Thread safety: every function may be called from any thread (distinct names).
#pragma once

#include <functional>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::process {

inline constexpr char kNetnsRunDir[] = "/run/netns";

// /run/netns/<name>.
std::string NamedNetnsPath(const std::string& name);

// Makes /run/netns/<name> name a new, empty network namespace (only `lo`, down), then runs
// `inside` (when given) on the thread that made it, inside the new namespace: what it opens
// there (a netlink socket, /proc/thread-self/ns/net) stays bound to the new namespace. Errors:
// the failing step's (kAlreadyExists when the name is taken, kUnavailable when the host cannot:
// not root, no network namespaces), or `inside`'s; on any error nothing is left behind.
Status AddNamedNetns(const std::string& name, const std::function<Status()>& inside = {});

// Removes /run/netns/<name> (lazy unmount, then unlink); the namespace goes with its last user.
// Ok when there is no such name; kInternal with the reason otherwise.
Status DeleteNamedNetns(const std::string& name);

// Runs fn on a short-lived thread that first enters the network namespace at `netns_path`;
// fn's result, or kUnavailable when the namespace cannot be opened or entered.
Status RunInNetns(const std::string& netns_path, const std::function<Status()>& fn);

// Writes `value` to /proc/sys/<key with dots as slashes> as seen from inside the namespace at
// `netns_path` (a net.* sysctl of that namespace, as `ip netns exec NS sysctl -w key=value`).
// Errors: RunInNetns's, or kInternal naming the file.
Status WriteNetnsSysctl(const std::string& netns_path, const std::string& key,
                        const std::string& value);

}  // namespace pjemu::process
