// The PersistentVolume vocabulary that the volume controller (emulator/storage), the scheduler's
// VolumeBinding plugin and the API server's table rows share, over wire-form JSON: the
// annotation and label names as Kubernetes v1.30 spells them, which nodes a volume's required
// nodeAffinity admits, and which StorageClass is the default (storageutil.IsDefaultAnnotation,
// GetDefaultClass). Each of them reads these here, so that they cannot drift apart.
// Thread safety: pure functions over values.
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

// A StorageClass is the default when either annotation is "true" (the beta one still counts).
inline constexpr char kDefaultClassAnnotation[] = "storageclass.kubernetes.io/is-default-class";
inline constexpr char kBetaDefaultClassAnnotation[] =
    "storageclass.beta.kubernetes.io/is-default-class";
// Set on a claim by the scheduler when the claim's class binds WaitForFirstConsumer: the node
// the provisioner is to create the volume on.
inline constexpr char kSelectedNodeAnnotation[] = "volume.kubernetes.io/selected-node";
// The node label a local volume's nodeAffinity names its node by.
inline constexpr char kHostnameLabel[] = "kubernetes.io/hostname";

// The nodes a PersistentVolume's spec.nodeAffinity.required admits through a
// `kubernetes.io/hostname In [...]` match expression, in order (every term's); empty = any
// node (no such expression, or no volume).
std::vector<std::string> VolumeNodes(const Json& volume);
// VolumeNodes is empty or holds `node`.
bool VolumeAdmitsNode(const Json& volume, const std::string& node);

// The host folder a PersistentVolume stores its files in: spec.hostPath.path, else
// spec.local.path (what the local-path provisioner and a static local volume name); "" for any
// other kind of volume. The kubelet mounts it; a TensorBoard reads its log dirs from it.
std::string VolumeHostPath(const Json& volume);

// metadata.annotations says the class is the default (either annotation "true").
bool IsDefaultStorageClass(const Json& storage_class);
// The default class among `classes` (GetDefaultClass): of those IsDefaultStorageClass, the
// newest by metadata.creationTimestamp (RFC 3339 text, compared as such), then the first by
// name; nullptr when none is. Null pointers in `classes` are skipped.
const Json* FindDefaultStorageClass(const std::vector<const Json*>& classes);

}  // namespace pjemu::api
