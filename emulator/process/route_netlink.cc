#include "emulator/process/route_netlink.h"

#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>
#include <sys/socket.h>

namespace pjemu::process {
namespace {

// Owners of libnl objects (each released with its own function).
template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using Link = std::unique_ptr<rtnl_link, Freer<rtnl_link, rtnl_link_put>>;
using Addr = std::unique_ptr<nl_addr, Freer<nl_addr, nl_addr_put>>;
using RtAddr = std::unique_ptr<rtnl_addr, Freer<rtnl_addr, rtnl_addr_put>>;
using Route = std::unique_ptr<rtnl_route, Freer<rtnl_route, rtnl_route_put>>;

Status Failed(const std::string& request, int err) {
  return InternalError(request + ": " + nl_geterror(err));
}

Result<Addr> ParseAddr(const std::string& text) {
  nl_addr* a = nullptr;
  int err = nl_addr_parse(text.c_str(), AF_INET, &a);
  if (err < 0) return Status(Code::kInvalid, "bad IPv4 address " + text + ": " + nl_geterror(err));
  return Addr(a);
}

}  // namespace

Result<std::unique_ptr<RouteNetlink>> RouteNetlink::Open() {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return Status(Code::kUnavailable, "route netlink: no memory for a socket");
  int err = nl_connect(sock, NETLINK_ROUTE);
  if (err < 0) {
    nl_socket_free(sock);
    return Status(Code::kUnavailable, std::string("route netlink: ") + nl_geterror(err));
  }
  return std::unique_ptr<RouteNetlink>(new RouteNetlink(sock));
}

RouteNetlink::~RouteNetlink() { nl_socket_free(sock_); }  // closes it too

Result<int> RouteNetlink::LinkIndex(const std::string& link) {
  rtnl_link* l = nullptr;
  int err = rtnl_link_get_kernel(sock_, 0, link.c_str(), &l);
  if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) {
    return Status(Code::kNotFound, "no link " + link);
  }
  if (err < 0) return Failed("ip link show " + link, err);
  Link owned(l);
  return rtnl_link_get_ifindex(l);
}

Status RouteNetlink::LinkUp(const std::string& link) {
  const std::string request = "ip link set " + link + " up";
  rtnl_link* l = nullptr;
  int err = rtnl_link_get_kernel(sock_, 0, link.c_str(), &l);
  if (err < 0) return Failed(request, err);
  Link orig(l);
  Link change(rtnl_link_alloc());
  if (!change) return InternalError(request + ": no memory");
  rtnl_link_set_flags(change.get(), IFF_UP);
  err = rtnl_link_change(sock_, orig.get(), change.get(), 0);
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::AddBridge(const std::string& name) {
  const std::string request = "ip link add " + name + " type bridge";
  Link bridge(rtnl_link_bridge_alloc());
  if (!bridge) return InternalError(request + ": no memory");
  rtnl_link_set_name(bridge.get(), name.c_str());
  rtnl_link_set_flags(bridge.get(), IFF_UP);
  int err = rtnl_link_add(sock_, bridge.get(), NLM_F_CREATE | NLM_F_EXCL);
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::AddVethToBridge(const std::string& name, const std::string& master,
                                     const std::string& peer_name, int peer_netns_fd) {
  const std::string request =
      "ip link add " + name + " master " + master + " type veth peer name " + peer_name;
  ASSIGN_OR_RETURN(int master_index, LinkIndex(master));
  // rtnl_link_veth_release frees the pair (the peer is the veth's info).
  std::unique_ptr<rtnl_link, Freer<rtnl_link, rtnl_link_veth_release>> veth(rtnl_link_veth_alloc());
  if (!veth) return InternalError(request + ": no memory");
  rtnl_link_set_name(veth.get(), name.c_str());
  rtnl_link_set_master(veth.get(), master_index);
  rtnl_link_set_flags(veth.get(), IFF_UP);
  Link peer(rtnl_link_veth_get_peer(veth.get()));  // a reference of its own
  rtnl_link_set_name(peer.get(), peer_name.c_str());
  rtnl_link_set_ns_fd(peer.get(), peer_netns_fd);
  // Not the peer's IFF_UP: the kernel brings it up before the pair is joined (ENOTCONN).
  int err = rtnl_link_add(sock_, veth.get(), NLM_F_CREATE | NLM_F_EXCL);
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::AddAddress(const std::string& link, const std::string& cidr, bool replace) {
  const std::string request =
      std::string("ip addr ") + (replace ? "replace " : "add ") + cidr + " dev " + link;
  ASSIGN_OR_RETURN(int index, LinkIndex(link));
  ASSIGN_OR_RETURN(Addr local, ParseAddr(cidr));
  RtAddr addr(rtnl_addr_alloc());
  if (!addr) return InternalError(request + ": no memory");
  rtnl_addr_set_ifindex(addr.get(), index);
  int err = rtnl_addr_set_local(addr.get(), local.get());  // takes a reference of its own
  if (err < 0) return Failed(request, err);
  rtnl_addr_set_prefixlen(addr.get(), static_cast<int>(nl_addr_get_prefixlen(local.get())));
  err = rtnl_addr_add(sock_, addr.get(), replace ? NLM_F_REPLACE : NLM_F_EXCL);
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::AddDefaultRoute(const std::string& gateway, const std::string& link) {
  const std::string request = "ip route add default via " + gateway + " dev " + link;
  ASSIGN_OR_RETURN(int index, LinkIndex(link));
  ASSIGN_OR_RETURN(Addr via, ParseAddr(gateway));
  ASSIGN_OR_RETURN(Addr any, ParseAddr("0.0.0.0/0"));
  Route route(rtnl_route_alloc());
  rtnl_nexthop* nh = rtnl_route_nh_alloc();
  if (!route || !nh) {
    if (nh) rtnl_route_nh_free(nh);
    return InternalError(request + ": no memory");
  }
  rtnl_route_set_family(route.get(), AF_INET);
  rtnl_route_set_protocol(route.get(), RTPROT_BOOT);
  int err = rtnl_route_set_dst(route.get(), any.get());
  if (err < 0) {
    rtnl_route_nh_free(nh);
    return Failed(request, err);
  }
  rtnl_route_nh_set_ifindex(nh, index);
  rtnl_route_nh_set_gateway(nh, via.get());
  rtnl_route_add_nexthop(route.get(), nh);  // the route owns it from here
  err = rtnl_route_add(sock_, route.get(), NLM_F_EXCL);
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::UnreachableRoute(const std::string& cidr, bool add) {
  const std::string request =
      std::string("ip route ") + (add ? "replace" : "delete") + " unreachable " + cidr;
  ASSIGN_OR_RETURN(Addr dst, ParseAddr(cidr));
  Route route(rtnl_route_alloc());
  if (!route) return InternalError(request + ": no memory");
  rtnl_route_set_family(route.get(), AF_INET);
  rtnl_route_set_type(route.get(), RTN_UNREACHABLE);
  rtnl_route_set_protocol(route.get(), RTPROT_BOOT);
  rtnl_route_set_table(route.get(), RT_TABLE_MAIN);
  int err = rtnl_route_set_dst(route.get(), dst.get());
  if (err >= 0) {
    err = add ? rtnl_route_add(sock_, route.get(), NLM_F_REPLACE)
              : rtnl_route_delete(sock_, route.get(), 0);
  }
  return err < 0 ? Failed(request, err) : Status::Ok();
}

Status RouteNetlink::ReplaceUnreachableRoute(const std::string& cidr) {
  return UnreachableRoute(cidr, true);
}

Status RouteNetlink::DeleteUnreachableRoute(const std::string& cidr) {
  return UnreachableRoute(cidr, false);
}

}  // namespace pjemu::process
