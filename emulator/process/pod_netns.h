// BridgeNetwork: pods' network namespaces on one bridge, as a CNI bridge plugin gives them, made in
// process (process::AddNamedNetns, and route netlink through libnl: process::RouteNetlink; no
// `ip` process). The bridge lives in a network namespace of its own (`pjemu-<pid>-net`, the
// "node" side), which has no link to the host's: pod addresses exist only inside namespaces
// this object makes, and no packet of a pod can leave the machine (there is no route out; the
// host's own routing table gets an `unreachable` route for the pod CIDR, so a host process
// addressing a pod fails at once instead of using the default route). Each pod gets a namespace
// `pjemu-<pid>-<name>` (under /run/netns, as `ip netns` keeps them, so the pod's containers come
// and go while it stays, and `ip netns exec` works on it), a veth pair whose one end is the
// pod's `eth0` with the pod's address and a default route via the bridge, the other end on the
// bridge; `lo` is up. Pods reach each other by address, on any port, each with ports of its own.
// Costs (this project's 2-core machine under load): a pod's network about 2.5 ms (a namespace,
// one veth pair, five netlink requests) where three `ip` processes took 100 to 200 ms; the
// bridge about 15 ms (most of it the kernel making the namespace); removal a lazy unmount each.
// Thread safety: every method may be called from any thread (one mutex around the changes).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/process/host_relay.h"
#include "emulator/process/route_netlink.h"

namespace pjemu::process {

class BridgeNetwork {
 public:
  // The bridge's namespace with `cni0` at `gateway`/`prefix` (e.g. "10.244.0.1", 16). Namespaces
  // left by emulators that are gone (pjemu-<dead pid>-*) are deleted first. kUnavailable with
  // the reason where the host cannot (not root, no network namespaces, no bridge or veth).
  static Result<std::unique_ptr<BridgeNetwork>> Create(const std::string& gateway, int prefix);
  // Deletes every pod namespace, the bridge's, and the host's route (unless another emulator's
  // bridge is there).
  ~BridgeNetwork();
  BridgeNetwork(const BridgeNetwork&) = delete;
  BridgeNetwork& operator=(const BridgeNetwork&) = delete;

  // A pod's namespace named `name` ([a-z0-9-], at most 20 characters) with `ip` on eth0: the
  // path of the namespace (/run/netns/...), which containers join with setns. kInternal with
  // the failed request (as the `ip` command it stands for) and the kernel's message when a step
  // fails (nothing is left half made).
  Result<std::string> AddPod(const std::string& name, const std::string& ip);
  // Deletes the pod's namespace (and its veth pair with it). Idempotent.
  void RemovePod(const std::string& name);

  // Relays the gateway's port `host_port` (in the bridge's namespace, which every pod routes to)
  // to 127.0.0.1:`host_port` on the host (HostRelay), so pods reach that one host service at
  // gateway():host_port. Started once per port, kept until the network goes. Errors: the
  // relay's (kUnavailable).
  Status RelayToHost(int host_port);

  // Adds `ip`/32 to the bridge namespace's `lo`, so pods reach a service of pjemu's at that
  // address through their default route (the cluster DNS server at 10.96.0.10). Idempotent.
  Status AddNodeAddress(const std::string& ip);
  // Runs argv inside the bridge's namespace (as `ip netns exec <ns> argv...` without the `ip`
  // process: spawned by a thread that entered the namespace; never a shell), e.g. `nft -f FILE`
  // for the Services' virtual addresses; RunCommand's errors, or kUnavailable when the
  // namespace cannot be entered.
  Status RunInNode(const std::vector<std::string>& argv);
  // Sets a net.* sysctl of the bridge's namespace (as `sysctl -w key=value` run there), e.g.
  // net.ipv4.ip_forward; WriteNetnsSysctl's errors.
  Status SetNodeSysctl(const std::string& key, const std::string& value);
  // The bridge namespace's path (/run/netns/pjemu-<pid>-net): a helper process setns's into it.
  std::string node_netns_path() const;

  const std::string& gateway() const { return gateway_; }
  int prefix() const { return prefix_; }

 private:
  BridgeNetwork() = default;
  std::string NsName(const std::string& pod) const { return base_ + "-" + pod; }
  std::mutex mu_;
  std::string base_;     // pjemu-<pid>
  std::string node_ns_;  // base_ + "-net"
  std::string gateway_;
  int prefix_ = 16;
  std::string host_route_;  // the unreachable route added to the host ("" = none)
  int next_veth_ = 0;       // GUARDED_BY(mu_)
  std::unique_ptr<RouteNetlink> node_rtnl_;  // GUARDED_BY(mu_): a socket on the bridge's namespace
  std::unique_ptr<RouteNetlink> host_rtnl_;  // on the host's (Create's thread's); the destructor's
  std::map<int, std::unique_ptr<HostRelay>> relays_;  // GUARDED_BY(mu_), by host port
};

// Runs argv (argv[0] looked up in PATH), stdin fed from `input`, and waits: ok, or kInternal
// with its stderr (kUnavailable when argv[0] is not found). The child is spawned in the calling
// thread's namespaces. Used for `nft`; exported for tests.
Status RunCommand(const std::vector<std::string>& argv, const std::string& input = "");

}  // namespace pjemu::process
