#include "emulator/api/resources.h"

#include "emulator/api/config_validation.h"
#include "emulator/api/disruption.h"
#include "emulator/api/pod_validation.h"
#include "emulator/api/pytorchjob_validation.h"

namespace pjemu::api {

const std::vector<ResourceType>& AllResources() {
  // group, version, kind, plural, singular, namespaced, has_status, has_scale, short names,
  // admission {defaulter, validator}.
  // clang-format off
  static const std::vector<ResourceType> kAll = {
      {"", "v1", "Namespace", "namespaces", "namespace", false, true, false, {"ns"}, {}},
      {"", "v1", "Node", "nodes", "node", false, true, false, {"no"}, {}},
      {"", "v1", "Pod", "pods", "pod", true, true, false, {"po"}, {nullptr, ValidatePod}},
      {"", "v1", "Service", "services", "service", true, true, false, {"svc"}, {}},
      {"", "v1", "Event", "events", "event", true, false, false, {"ev"}, {}},
      {"", "v1", "ConfigMap", "configmaps", "configmap", true, false, false, {"cm"},
       {nullptr, ValidateConfigMap}},
      {"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true, false, false, {"sa"},
       {}},
      {"", "v1", "Secret", "secrets", "secret", true, false, false, {},
       {DefaultSecret, ValidateSecret}},
      {"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", true,
       true, false, {"pvc"},
       {DefaultPersistentVolumeClaim, ValidatePersistentVolumeClaim}},
      {"", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", false, true, false,
       {"pv"}, {DefaultPersistentVolume, ValidatePersistentVolume}},
      {"storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", false, false,
       false, {"sc"}, {DefaultStorageClass, ValidateStorageClass}},
      {"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", "pytorchjob", true, true, true, {},
       {nullptr, ValidatePyTorchJob}},
      {"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       "horizontalpodautoscaler", true, true, false, {"hpa"}, {}},
      {"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", true,
       true, false, {"pdb"}, {nullptr, ValidatePodDisruptionBudget}},
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
const ResourceType& ServiceAccounts() { return *FindResource("", "serviceaccounts"); }
const ResourceType& PersistentVolumeClaims() { return *FindResource("", "persistentvolumeclaims"); }
const ResourceType& PersistentVolumes() { return *FindResource("", "persistentvolumes"); }
const ResourceType& StorageClasses() { return *FindResource("storage.k8s.io", "storageclasses"); }
const ResourceType& PodDisruptionBudgets() {
  return *FindResource("policy", "poddisruptionbudgets");
}
const ResourceType& PyTorchJobs() { return *FindResource("kubeflow.org", "pytorchjobs"); }

}  // namespace pjemu::api
