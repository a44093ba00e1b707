// RouteNetlink: the few iproute2 commands the pod network needs (`ip link`, `ip addr`,
// `ip route`), as route netlink requests sent in process through libnl-route-3 (Debian's
// libnl-route-3-dev) instead of an `ip` process each. A socket acts on the network namespace of
// the thread that opened it, wherever it is used from after: open one inside a namespace
// (process::AddNamedNetns's `inside`, RunInNetns) to configure that namespace from any thread.
// Every request waits for the kernel's answer.
// Thread safety: one thread at a time per object (libnl's sockets are not thread-safe); distinct
// objects are independent.
#pragma once

#include <memory>
#include <string>

#include "emulator/common/status.h"

struct nl_sock;

namespace pjemu::process {

class RouteNetlink {
 public:
  // A route netlink socket on the calling thread's network namespace. kUnavailable with
  // libnl's message when it cannot be opened.
  static Result<std::unique_ptr<RouteNetlink>> Open();
  ~RouteNetlink();
  RouteNetlink(const RouteNetlink&) = delete;
  RouteNetlink& operator=(const RouteNetlink&) = delete;

  // Errors below: kInternal with the request (as the `ip` command it stands for) and the
  // kernel's or libnl's message; kNotFound when a named link does not exist.

  // `ip link set <link> up`.
  Status LinkUp(const std::string& link);
  // `ip link add <name> type bridge` and up.
  Status AddBridge(const std::string& name);
  // `ip link add <name> master <master> up type veth peer name <peer> netns <peer_netns_fd>`:
  // one end up on the bridge here, the other (down: LinkUp it there) in another namespace.
  Status AddVethToBridge(const std::string& name, const std::string& master,
                         const std::string& peer, int peer_netns_fd);
  // `ip addr add|replace <cidr> dev <link>` ("10.244.0.1/16").
  Status AddAddress(const std::string& link, const std::string& cidr, bool replace = false);
  // `ip route add default via <gateway> dev <link>`.
  Status AddDefaultRoute(const std::string& gateway, const std::string& link);
  // `ip route replace unreachable <cidr>` / `ip route delete unreachable <cidr>` (main table,
  // protocol boot, as ip makes them, so either removes the other's).
  Status ReplaceUnreachableRoute(const std::string& cidr);
  Status DeleteUnreachableRoute(const std::string& cidr);
  // The index of a link by name (kNotFound when there is none).
  Result<int> LinkIndex(const std::string& link);

 private:
  explicit RouteNetlink(nl_sock* sock) : sock_(sock) {}
  Status UnreachableRoute(const std::string& cidr, bool add);
  nl_sock* sock_;
};

}  // namespace pjemu::process
