// ClusterServices: the cluster's Services made real on the pod network (under isolation, one per
// cluster, wired once by the Cluster after the kubelet made the bridge):
//  - cluster DNS: a Dnsmasq in the bridge namespace listening on `dns_ip` (10.96.0.10, the
//    conventional kube-dns ClusterIP, added to that namespace's lo: every pod reaches it by its
//    default route), fed one hosts file (service_records: ComputeDnsRecords) that this object
//    rewrites atomically (write, then rename into dnsmasq's hosts directory) whenever the
//    records change; dnsmasq re-reads it through inotify within milliseconds;
//  - ClusterIP virtual addresses: the nftables table of ComputeServiceRules (DNAT to a ready
//    endpoint, masquerade of DNAT'd traffic) loaded into the bridge namespace with `nft -f`
//    (IPv4 forwarding on there), reloaded whenever the rules change.
// Start does not wait for dnsmasq (dns_state(): the kubelet holds a pod's containers while it
// starts), and loads no table until there are rules (an empty one would change nothing: a job of
// headless Services never runs `nft`).
// It watches Services and Pods (client::Informer, every namespace) and recomputes both after
// each batch of events (one pass posted per batch on the loop). Files live in `dir`
// (/run/pjemu-<pid>-dns by default); those of emulators that are gone are removed at start.
// Errors: Start fails (kUnavailable) when dnsmasq cannot run (not installed, no namespace); when
// it does not start after all, without `nft`, or when the kernel refuses the first table, one
// line on stderr says so (`pjemu: cluster: DNS off: ...`, `pjemu: cluster: ClusterIP addresses
// off: ...`): dns_state() is then kFailed, cluster_ip_status() the reason.
// Thread safety: Start, Stop and the destructor on the EventLoop thread (the informers' rule);
// Resolves and the accessors from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/client/informer.h"
#include "emulator/network/dnsmasq.h"
#include "emulator/network/service_records.h"
#include "emulator/process/pod_netns.h"

namespace pjemu::network {

inline constexpr char kClusterDnsIp[] = "10.96.0.10";

struct ClusterServicesOptions {
  std::string dns_ip = kClusterDnsIp;
  std::string dir;  // "" = /run/pjemu-<pid>-dns
  process::OrphanGuard* guard = nullptr;  // DnsmasqOptions::guard
};

class ClusterServices {
 public:
  // Starts dnsmasq and the informers (their first list is delivered by the loop), and turns
  // IPv4 forwarding on in the bridge's namespace.
  static Result<std::unique_ptr<ClusterServices>> Start(
      client::Client& client, EventLoop& loop, std::shared_ptr<process::BridgeNetwork> bridge,
      ClusterServicesOptions options = {});
  ~ClusterServices();  // Stop()
  ClusterServices(const ClusterServices&) = delete;
  ClusterServices& operator=(const ClusterServices&) = delete;

  // Stops the informers and dnsmasq and removes the files (the nftables table goes with the
  // bridge's namespace). Idempotent.
  void Stop();

  // Whether dnsmasq answers `name` for a pod of namespace `pod_ns` now (the records last
  // written, with the pod's search path: service_records' Resolves).
  bool Resolves(const std::string& name, const std::string& pod_ns) const;
  const std::string& dns_ip() const { return options_.dns_ip; }
  // Whether dnsmasq answers yet (kStarting for its first milliseconds), or failed to start.
  Dnsmasq::State dns_state() const;
  // Ok while ClusterIP virtual addresses can be applied (nft there, the first table taken);
  // else why not.
  Status cluster_ip_status() const;
  // Hosts files written so far (the first included).
  std::int64_t writes() const;

 private:
  ClusterServices(client::Client& client, EventLoop& loop,
                  std::shared_ptr<process::BridgeNetwork> bridge, ClusterServicesOptions options);
  using Objects = std::map<std::string, std::shared_ptr<const Json>>;  // by namespace/name
  void Take(Objects& into, const api::WatchEvent& event);
  void Sync();  // recomputes and applies what changed
  Status WriteHosts(const std::string& text);
  Status ApplyRules(const std::vector<ServiceRule>& rules);
  void SetUpClusterIps();  // IPv4 forwarding, nft's presence: cluster_ip_status_

  EventLoop& loop_;
  std::shared_ptr<process::BridgeNetwork> bridge_;
  ClusterServicesOptions options_;
  std::unique_ptr<Dnsmasq> dnsmasq_;
  Objects services_, pods_;
  std::unique_ptr<client::Informer> service_informer_, pod_informer_;
  bool sync_posted_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::string hosts_text_;
  std::vector<ServiceRule> rules_;  // the rules loaded (none at first: no table)
  bool rules_loaded_ = false;       // a table was loaded
  mutable std::mutex mu_;
  DnsRecords records_;                     // GUARDED_BY(mu_)
  Status cluster_ip_status_ = Status::Ok();  // GUARDED_BY(mu_)
  std::int64_t writes_ = 0;                // GUARDED_BY(mu_)
};

}  // namespace pjemu::network
