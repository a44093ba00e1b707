// Admission of ConfigMaps, Secrets, PersistentVolumeClaims, PersistentVolumes and StorageClasses:
// the API server's defaulting (SetDefaults_*, the Secret's stringData conversion) and validation
// (ValidateConfigMap, ValidateSecret, ValidatePersistentVolumeClaim[Update],
// ValidatePersistentVolume[Update], ValidateStorageClass[Update]) with kube-apiserver's messages.
// They are those rows' admission in the resource table (resources.cc), so every store runs them.
// Known deviations: the DefaultStorageClass admission plugin (which needs the store) is not here;
// a PVC update's Forbidden message omits the spec diff the real server appends.
// Thread safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

// The real server's 1 MiB limit on a ConfigMap's or a Secret's data (core.MaxSecretSize).
inline constexpr std::size_t kMaxConfigDataBytes = 1024 * 1024;

// ConfigMap: data/binaryData keys (IsConfigMapKey), no key in both, total size, immutable.
Status ValidateConfigMap(const Json& cm, const Json* old, std::vector<std::string>* warnings);

// Secret: stringData folded into base64 data (stringData wins) and removed; type Opaque.
void DefaultSecret(Json& secret);
// Secret: data base64 (400 otherwise), keys, total size, the type's required keys, type and
// (when immutable) data immutable.
Status ValidateSecret(const Json& secret, const Json* old, std::vector<std::string>* warnings);

// PVC: spec.volumeMode Filesystem, status.phase Pending.
void DefaultPersistentVolumeClaim(Json& pvc);
// PVC: accessModes, resources.requests.storage, volumeMode; on update the spec is immutable but
// for binding (volumeName once, storageClassName when unset) and storage growth of bound claims.
Status ValidatePersistentVolumeClaim(const Json& pvc, const Json* old,
                                     std::vector<std::string>* warnings);

// PV: persistentVolumeReclaimPolicy Retain, volumeMode Filesystem, status.phase Pending.
void DefaultPersistentVolume(Json& pv);
// PV: capacity.storage, accessModes, exactly one volume source (hostPath's path and type,
// local's path and nodeAffinity), reclaim policy; the source is immutable.
Status ValidatePersistentVolume(const Json& pv, const Json* old,
                                std::vector<std::string>* warnings);

// StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate.
void DefaultStorageClass(Json& sc);
// StorageClass: provisioner required (a qualified name), the enums; parameters, provisioner,
// reclaimPolicy and volumeBindingMode immutable.
Status ValidateStorageClass(const Json& sc, const Json* old, std::vector<std::string>* warnings);

// Where the PVC/PV access modes and volume modes are checked, the values Kubernetes knows.
const std::vector<std::string>& SupportedAccessModes();

}  // namespace pjemu::api
