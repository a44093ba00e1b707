// VolumeController: kind's storage in one actor, the local-path provisioner (rancher.io/local-path)
// together with kube-controller-manager's PersistentVolume and PVC-protection controllers:
//  - at Start, the default StorageClass `standard` (volumeBindingMode WaitForFirstConsumer,
//    reclaimPolicy Delete) is created unless a default class or one named `standard` exists;
//  - a claim without spec.storageClassName gets the default class's name;
//  - a claim binds to a matching pre-created volume (MatchVolume), else, when its class's
//    provisioner is rancher.io/local-path, a volume is provisioned: at once for Immediate, on the
//    node the scheduler wrote into volume.kubernetes.io/selected-node for WaitForFirstConsumer;
//    provisioning creates <storage_root>/pvc-<uid>_<ns>_<name> (mode 0777) and the volume
//    pvc-<uid> with that hostPath, then both are bound (claim and volume phase Bound);
//  - a volume whose claim is gone is Released; reclaimPolicy Delete removes the provisioner's
//    directory (only ever one under storage_root) and the volume, Retain keeps both;
//  - claims carry the kubernetes.io/pvc-protection finalizer, removed once a claim being
//    deleted is used by no non-terminal pod;
//  - Events on the claim as kind shows them (WaitForFirstConsumer, ExternalProvisioning,
//    Provisioning, ProvisioningSucceeded, ProvisioningFailed, FailedBinding), each reason once.
// Reads claims, volumes, classes and pods through four client::Informers; every change asks for
// one coalesced, level-based pass over all claims and volumes (writes only what differs). A pass
// that met an error (a write, a directory) is retried after retry_interval.
// Thread safety: constructor, Start and Stop on the EventLoop thread (or before it runs);
// everything else runs on the EventLoop thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/coalesced_pass.h"
#include "emulator/common/event_loop.h"

namespace pjemu::storage {

struct VolumeControllerOptions {
  // Where provisioned volumes' directories are created (absolute; created when missing).
  std::string storage_root;
  // The node Immediate claims are provisioned on (the cluster's one node).
  std::string node_name = "pjemu-node";
  Duration retry_interval = 10s;
};

class VolumeController {
 public:
  VolumeController(client::Client& client, EventLoop& loop, VolumeControllerOptions options);
  ~VolumeController();  // Stop()
  VolumeController(const VolumeController&) = delete;
  VolumeController& operator=(const VolumeController&) = delete;

  // Creates the default class when needed and starts the informers: the Client's errors;
  // kInvalid for a storage_root that is not absolute.
  Status Start();
  void Stop();
  // One pass over every claim and volume (what each change triggers).
  void SyncAll();

 private:
  void OnPod(const api::WatchEvent& event);
  Status EnsureDefaultClass();
  std::string DefaultClassName() const;
  const Json* FindClass(const std::string& name) const;
  bool SyncClaim(const Json& claim);
  bool SyncUnboundClaim(const Json& claim, const std::string& class_name);
  bool Provision(const Json& claim, const Json& storage_class, const std::string& node);
  bool Bind(const Json& claim, const Json& volume, const std::string& provisioner);
  bool SyncVolume(const Json& volume);
  bool Reclaim(const Json& volume);
  bool ReleaseProtection(const Json& claim);
  bool HasProtection(const Json& claim) const;
  bool PatchFinalizers(const Json& claim, const std::vector<std::string>& finalizers);
  // An Event about `object`, at most once per (uid, reason).
  void EventOnce(const Json& object, const std::string& type, const std::string& reason,
                 const std::string& message, const std::string& component);

  client::Client& client_;
  EventLoop& loop_;
  VolumeControllerOptions options_;
  // Caches by namespace/name (claims) or name (volumes, classes), kept by the informers.
  std::map<std::string, Json> claims_, volumes_, classes_;
  std::map<std::string, std::set<std::string>> pod_claims_;  // pod uid -> claim keys in use
  std::map<std::string, std::set<std::string>> said_;        // object uid -> reasons evented
  client::Informer claim_informer_, volume_informer_, class_informer_, pod_informer_;
  CoalescedPass passes_{loop_, [this] { SyncAll(); }};
};

}  // namespace pjemu::storage
