// Pod networking (see README.md in this folder):
//  - ClusterNetwork, shared by every Kubelet of one emulator, gives each pod a network namespace
//    of its own on one bridge where the host can (EnableIsolation, process::BridgeNetwork: an
//    address from the node's pod CIDR, nothing rewritten); else, on the host's network, its own
//    address in 127.0.0.0/8 (status.podIP) and each (namespace, service, port) a free host port;
//  - RewriteServiceEnv rewrites, at launch only, the env values that name a Service
//    (`svc`, `svc.ns`, `svc.ns.svc[.cluster.local]`, optionally `:port`) to the service's
//    target pod IP, and env values of *PORT* variables equal to a port of such a service to the
//    service's host port. The stored pod spec is never changed. A pod of a headless Service by
//    its hostname (`<hostname>.<subdomain>[.<ns>[.svc[.cluster.local]]]`, ParsePodHost: the
//    names a JobSet's pods reach each other by) rewrites to that pod's IP.
// Pods share the host network, so a server that binds every interface (c10d's TCPStore does)
// on the declared port would collide with another job's; the host-port map keeps two jobs
// declaring 23456 apart while all pods of one job agree on the port.
// Thread safety: ClusterNetwork is safe from any thread (one mutex); RewriteServiceEnv is pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "emulator/common/status.h"
#include "emulator/kubelet/container_env.h"
#include "emulator/process/pod_netns.h"

namespace pjemu::kubelet {

// A pod's own network (EnableIsolation): its address and the namespace its containers join.
struct PodSandboxNetwork {
  std::string ip;
  std::string netns_path;
};

class ClusterNetwork {
 public:
  // Pod IPs are 127.<subnet>.x.y; node IPs 127.0.0.<n + 1>.
  explicit ClusterNetwork(int subnet = 42) : subnet_(subnet) {}

  // Network isolation, as a CNI bridge plugin gives it (process::BridgeNetwork): every pod of
  // the cluster gets a network namespace of its own on one bridge (10.244.0.1/16, in a namespace
  // of its own: nothing leaves the machine), with an address from its node's pod CIDR
  // 10.244.<node_index + 1>.0/24. Idempotent; kUnavailable with the reason where the host
  // cannot (then pods keep the host's network and the addresses above).
  Status EnableIsolation();
  bool isolated() const;
  // Under isolation: the pod's network, made on first call and kept until ReleasePodIp.
  Result<PodSandboxNetwork> PodSandbox(const std::string& uid, int node_index);
  // Under isolation: where pods reach the host's port `host_port` (the API server): the
  // bridge's gateway, relayed to 127.0.0.1 (process::BridgeNetwork::RelayToHost); nullopt
  // without isolation (pods share the host's network and reach it directly).
  Result<std::optional<std::string>> HostAddressFor(int host_port);
  // The bridge (for network::ClusterServices); nullptr without isolation.
  std::shared_ptr<process::BridgeNetwork> bridge() const;
  // Cluster DNS, wired by the Cluster (network::ClusterServices): the nameserver a pod's
  // resolv.conf names, whether it resolves a name for a pod of a namespace now, and whether the
  // server is still starting (nullptr: it never is) or failed to (then there is no cluster DNS:
  // dns_server() is "", DnsResolves nullopt). Cleared by SetDns("", nullptr). The functions are
  // called without this object's lock held.
  using DnsResolver = std::function<bool(const std::string& name, const std::string& pod_ns)>;
  enum class DnsState { kStarting, kServing, kFailed };
  using DnsStateFn = std::function<DnsState()>;
  void SetDns(std::string server, DnsResolver resolves, DnsStateFn state = nullptr);
  std::string dns_server() const;  // "" without cluster DNS
  // nullopt without cluster DNS.
  std::optional<bool> DnsResolves(const std::string& name, const std::string& pod_ns) const;
  // True while the cluster DNS server starts: a pod's lookups would fail (the kubelet holds its
  // containers until it answers or fails).
  bool DnsStarting() const;
  // The node's pod CIDR under isolation ("" without).
  std::string PodCidr(int node_index) const;

  // The address of pod `uid`, allocated on first call and stable until ReleasePodIp.
  std::string PodIp(const std::string& uid);
  void ReleasePodIp(const std::string& uid);
  // The host port standing for `port` of service ns/name: allocated once (a port the kernel
  // reports free on 0.0.0.0), the same for every pod and kubelet. kUnavailable if none is free.
  Result<int> HostPort(const std::string& ns, const std::string& service, int port);
  // Forgets the ports of a deleted service.
  void ReleaseService(const std::string& ns, const std::string& service);

 private:
  mutable std::mutex mu_;
  int subnet_;
  std::uint32_t next_ip_ = 2;                                       // GUARDED_BY(mu_)
  std::unordered_map<std::string, std::string> pod_ips_;            // GUARDED_BY(mu_), by uid
  std::unordered_set<std::string> used_ips_;                        // GUARDED_BY(mu_)
  std::map<std::tuple<std::string, std::string, int>, int> ports_;  // GUARDED_BY(mu_)
  std::set<int> taken_ports_;  // the values of ports_; GUARDED_BY(mu_)
  std::shared_ptr<process::BridgeNetwork> bridge_;                  // GUARDED_BY(mu_)
  std::string dns_server_;                                          // GUARDED_BY(mu_)
  DnsResolver dns_resolves_;                                        // GUARDED_BY(mu_)
  DnsStateFn dns_state_;                                            // GUARDED_BY(mu_)
  std::map<std::string, PodSandboxNetwork> sandboxes_;              // GUARDED_BY(mu_), by uid
  std::map<int, std::uint32_t> next_host_;  // GUARDED_BY(mu_): node -> next last octet
  DnsState CurrentDnsState() const;         // kFailed without cluster DNS; takes the lock
};

// A resolvable service: its target pod's IP and declared port -> host port.
struct ServiceTarget {
  std::string ip;
  std::map<int, int> ports;
};
// Resolves a host name as written in an env value (nullopt: not a service of this cluster).
using ServiceResolver = std::function<std::optional<ServiceTarget>(const std::string& host)>;

// Splits `svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local` into (service, namespace);
// pod_ns when the name has no namespace part. nullopt for anything else (IPs, other domains,
// localhost).
std::optional<std::pair<std::string, std::string>> ParseServiceHost(const std::string& host,
                                                                    const std::string& pod_ns);

// A pod's DNS name through its subdomain's headless Service: `<hostname>.<subdomain>`, then
// optionally `.<ns>`, `.<ns>.svc`, `.<ns>.svc.cluster.local`.
struct PodHost {
  std::string hostname;
  std::string subdomain;  // the headless Service's name
  std::string ns;         // pod_ns when the name has no namespace part
  bool operator==(const PodHost& o) const {
    return hostname == o.hostname && subdomain == o.subdomain && ns == o.ns;
  }
};
// Splits such a name; nullopt for anything else (one label, IPs, other domains). A name of two
// or three labels is also a Service's form (`svc.ns`): the resolver tries the pod first and
// falls back to the Service when no pod answers.
std::optional<PodHost> ParsePodHost(const std::string& host, const std::string& pod_ns);
// True when `pod` answers to `host`: its spec.hostname (else metadata.name) and spec.subdomain.
bool AnswersTo(const Json& pod, const PodHost& host);

// The label selector text of a Service's spec.selector ("a=b,c=d"; "" when it selects nothing).
std::string ServiceSelector(const Json& service);

// What RewriteServiceEnv changes: Service names to their pods' IPs and ports to host ports, or
// only the ports (the container's /etc/hosts resolves the names), or nothing (a pod with a
// network of its own listens on its declared ports).
enum class ServiceRewrite { kNamesAndPorts, kPortsOnly, kNone };

// The rewrite described above, applied to a copy of env.
EnvList RewriteServiceEnv(const EnvList& env, const ServiceResolver& resolve,
                          ServiceRewrite what = ServiceRewrite::kNamesAndPorts);

}  // namespace pjemu::kubelet
