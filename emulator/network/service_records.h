// Service records: what cluster DNS and kube-proxy make of the Services and Pods, computed as
// pure functions (no I/O, deterministic: sorted output) so the component that applies them
// (ClusterServices) stays a thin loop and tests need no network.
//  - DNS (as CoreDNS's kubernetes plugin answers, A records only): `<svc>.<ns>.svc.<domain>`
//    for every Service: a ClusterIP Service's virtual address; a headless one's (clusterIP
//    None, or none allocated) ready selected pods' addresses (not-ready ones too with
//    publishNotReadyAddresses); and `<hostname>.<subdomain>.<ns>.svc.<domain>` for a pod with
//    spec.hostname and spec.subdomain naming a headless Service of its namespace that selects it
//    (what Indexed Jobs and JobSets rely on). Pod addresses come from status.podIP; a pod being
//    deleted or without an address has none. ExternalName Services and PTR records: none.
//  - ClusterIP rules (kube-proxy's): per Service port, the virtual address and port, and the
//    ready endpoints' address and targetPort (a number, a container port's name looked up in the
//    pod, or the port itself); NftRules renders them as one nftables table for the bridge
//    namespace (DNAT in prerouting, masquerade of DNAT'd traffic).
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::network {

inline constexpr char kClusterDomain[] = "cluster.local";

// Fully qualified name (no trailing dot) -> addresses, sorted and unique.
using DnsRecords = std::map<std::string, std::vector<std::string>>;

// The records of `services` and `pods` (objects as stored; any namespaces).
DnsRecords ComputeDnsRecords(const std::vector<const Json*>& services,
                             const std::vector<const Json*>& pods);

// The records as a hosts file (one `ip name` line per address, sorted), dnsmasq's input.
std::string HostsFileText(const DnsRecords& records);

// Whether a pod of namespace `pod_ns` resolves `name` through these records with the resolv.conf
// the kubelet writes: search `<ns>.svc.<domain> svc.<domain> <domain>`, ndots:5 (a name with a
// trailing dot is absolute).
bool Resolves(const DnsRecords& records, const std::string& name, const std::string& pod_ns);

// One Service port's virtual address: traffic to cluster_ip:port (protocol "tcp"/"udp") goes
// to one of the endpoints (address, port).
struct ServiceRule {
  std::string cluster_ip;
  std::string protocol;
  int port = 0;
  std::vector<std::pair<std::string, int>> endpoints;
};
bool operator==(const ServiceRule& a, const ServiceRule& b);

// The rules of every ClusterIP Service port with at least one ready endpoint, sorted.
std::vector<ServiceRule> ComputeServiceRules(const std::vector<const Json*>& services,
                                             const std::vector<const Json*>& pods);

// The nftables script that replaces table `ip pjemu_services` with these rules (one
// transaction: `nft -f`). Endpoints of one rule with different ports keep the first one's port
// and only the endpoints with it (a Service whose pods name the same targetPort differently).
std::string NftRules(const std::vector<ServiceRule>& rules);

}  // namespace pjemu::network
