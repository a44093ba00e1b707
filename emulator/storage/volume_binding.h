// The PersistentVolume controller's and the local-path provisioner's pure decisions, over
// wire-form objects: which class a claim is of, which pre-created volume a claim binds to, the
// PersistentVolume the provisioner creates for a claim, and the patches that bind the two, as
// kube-controller-manager (v1.30) and rancher.io/local-path (kind) write them.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::storage {

// The annotation names the scheduler shares (the default class, the selected node) and which
// nodes a volume admits are api's: emulator/api/persistent_volumes.h.
inline constexpr const char* kLocalPathProvisioner = "rancher.io/local-path";
inline constexpr const char* kPvcProtectionFinalizer = "kubernetes.io/pvc-protection";

// kind's default class: `standard`, rancher.io/local-path, Delete, WaitForFirstConsumer.
Json DefaultStorageClass();
// "Immediate" unless the class says "WaitForFirstConsumer".
bool WaitsForFirstConsumer(const Json& storage_class);

// spec.storageClassName: nullopt when the field is absent or null (the default class applies),
// "" when explicitly empty (no class: only pre-created volumes without a class bind).
std::optional<std::string> ClaimClass(const Json& claim);
// status.phase == Bound with spec.volumeName set.
bool IsClaimBound(const Json& claim);
// The claim's resources.requests.storage in bytes (0 when absent or unparsable).
std::int64_t ClaimRequestBytes(const Json& claim);

// The pre-created volume `claim` binds to, among `volumes` (index): one reserved for it by
// claimRef, or else the smallest Available one without claimRef whose class equals the claim's
// ("" matches a volume without class), whose accessModes include the claim's, whose capacity
// holds the request, that spec.volumeName names when set, and that admits `node` when one is
// given (WaitForFirstConsumer). nullopt when none.
std::optional<std::size_t> MatchVolume(const Json& claim, const std::string& claim_class,
                                       const std::vector<Json>& volumes, const std::string& node);

// The PersistentVolume `pvc-<uid>` rancher.io/local-path creates for a claim on `node` at
// `path`, with the class's reclaim policy and claimRef already set (as external provisioners do).
Json ProvisionedVolume(const Json& claim, const Json& storage_class, const std::string& node,
                       const std::string& path);
// `<root>/pvc-<uid>_<namespace>_<name>`: the provisioner's directory for a claim.
std::string VolumeDirectory(const std::string& root, const Json& claim);

// Merge patches that bind: the volume's claimRef (with bound-by-controller when it was not
// reserved already), the claim's volumeName and annotations (storage-provisioner ones when
// `provisioner` is not ""), and the status patches of both.
Json VolumeBindPatch(const Json& volume, const Json& claim);
Json ClaimBindPatch(const Json& claim, const Json& volume, const std::string& provisioner);
Json ClaimBoundStatus(const Json& volume);

// What happens to a volume whose claim is gone: "Released" then, by reclaimPolicy, "Delete"
// (the provisioner's volume under `root`: remove the directory, delete the volume) or "Retain".
std::string ReclaimPolicy(const Json& volume);
// The hostPath of a volume when it lies strictly under root (after normalising), else "".
std::string OwnedPath(const Json& volume, const std::string& root);

}  // namespace pjemu::storage
