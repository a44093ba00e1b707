#include "emulator/api/resources.h"

#include "emulator/api/config_validation.h"
#include "emulator/api/disruption.h"
#include "emulator/api/field_schema.h"
#include "emulator/api/pod_validation.h"
#include "emulator/api/pytorchjob_validation.h"

namespace pjemu::api {

const std::vector<ResourceType>& AllResources() {
  // group, version, kind, plural, singular, namespaced, has_status, has_scale, short names,
  // admission {defaulter, validator}, field rules (field_schema.h).
  // clang-format off
  static const std::vector<ResourceType> kAll = {
      {"", "v1", "Namespace", "namespaces", "namespace", false, true, false, {"ns"}, {}, NamespaceFieldRules},
      {"", "v1", "Node", "nodes", "node", false, true, false, {"no"}, {}, NodeFieldRules},
      {"", "v1", "Pod", "pods", "pod", true, true, false, {"po"}, {nullptr, ValidatePod}, PodFieldRules},
      {"", "v1", "Service", "services", "service", true, true, false, {"svc"}, {}, ServiceFieldRules},
      {"", "v1", "Event", "events", "event", true, false, false, {"ev"}, {}, EventFieldRules},
      {"", "v1", "ConfigMap", "configmaps", "configmap", true, false, false, {"cm"},
       {nullptr, ValidateConfigMap}, ConfigDataFieldRules},
      {"", "v1", "Secret", "secrets", "secret", true, false, false, {},
       {DefaultSecret, ValidateSecret}, ConfigDataFieldRules},
      {"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", true,
       true, false, {"pvc"},
       {DefaultPersistentVolumeClaim, ValidatePersistentVolumeClaim},
       PersistentVolumeClaimFieldRules},
      {"", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", false, true, false,
       {"pv"}, {DefaultPersistentVolume, ValidatePersistentVolume},
       PersistentVolumeFieldRules},
      {"storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", false, false,
       false, {"sc"}, {DefaultStorageClass, ValidateStorageClass}, StorageClassFieldRules},
      {"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", "pytorchjob", true, true, true, {},
       {nullptr, ValidatePyTorchJob}, PyTorchJobFieldRules},
      {"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       "horizontalpodautoscaler", true, true, false, {"hpa"}, {}},
      {"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", true,
       true, false, {"pdb"}, {nullptr, ValidatePodDisruptionBudget},
       PodDisruptionBudgetFieldRules},
  };
  // clang-format on
  return kAll;
}

const ResourceType* FindResource(std::string_view group, std::string_view plural) {
  for (const auto& r : AllResources()) {
    if (r.group == group && r.plural == plural) return &r;
  }
  return nullptr;
}

const ResourceType* FindByKind(std::string_view api_version, std::string_view kind) {
  for (const auto& r : AllResources()) {
    if (r.ApiVersion() == api_version && r.kind == kind) return &r;
  }
  return nullptr;
}

const ResourceType& Pods() { return *FindResource("", "pods"); }
const ResourceType& Services() { return *FindResource("", "services"); }
const ResourceType& Events() { return *FindResource("", "events"); }
const ResourceType& Namespaces() { return *FindResource("", "namespaces"); }
const ResourceType& Nodes() { return *FindResource("", "nodes"); }
const ResourceType& ConfigMaps() { return *FindResource("", "configmaps"); }
const ResourceType& Secrets() { return *FindResource("", "secrets"); }
const ResourceType& PersistentVolumeClaims() { return *FindResource("", "persistentvolumeclaims"); }
const ResourceType& PersistentVolumes() { return *FindResource("", "persistentvolumes"); }
const ResourceType& StorageClasses() { return *FindResource("storage.k8s.io", "storageclasses"); }
const ResourceType& PodDisruptionBudgets() {
  return *FindResource("policy", "poddisruptionbudgets");
}
const ResourceType& PyTorchJobs() { return *FindResource("kubeflow.org", "pytorchjobs"); }

}  // namespace pjemu::api
