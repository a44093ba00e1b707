// The resource types pjemu serves: one table that the store (admission), the API server (paths,
// discovery, Table columns) and the clients share. Adding a kind means adding a row in
// resources.cc.
// Thread safety: immutable after static initialisation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

// What the API server's admission chain does to writes of one type: mutating (defaulting), then
// validating. The store runs both on create and on update of the main resource (never on /status
// or /scale writes), after its own metadata checks and under its lock, so both must be pure
// functions of their arguments. nullptr = nothing to do.
struct Admission {
  // Fills in defaults on the incoming object before it is validated and stored. No served type
  // has one: the PyTorchJob operator defaults its in-memory copy (SetDefaults, pytorchjob.h),
  // never the stored object.
  void (*defaulter)(Json& object) = nullptr;
  // Refuses the write with a non-OK Status (422 Invalid or 403 Forbidden with details.causes).
  // `old` is the stored object on update, nullptr on create; warnings (may be null) collect the
  // response's Warning headers.
  Status (*validator)(const Json& object, const Json* old,
                      std::vector<std::string>* warnings) = nullptr;
};

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string kind;      // "Pod"
  std::string plural;    // "pods"
  std::string singular;  // "pod"
  bool namespaced = true;
  bool has_status = true;  // a /status subresource exists (writes through it touch only .status)
  bool has_scale = false;  // a /scale subresource exists (pytorchjobs)
  std::vector<std::string> short_names;
  Admission admission;

  // "v1" or "kubeflow.org/v1".
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "pods" or "pytorchjobs.kubeflow.org": the prefix of the real server's error messages.
  std::string PluralGroup() const { return group.empty() ? plural : plural + "." + group; }
  // "PodList".
  std::string ListKind() const { return kind + "List"; }
  // A custom resource (kubeflow.org, defined by a CRD on a cluster): its group is dotted and not
  // one of Kubernetes' own (core, policy, storage.k8s.io...). Custom resources decode as
  // unstructured objects and take no strategic merge patch.
  bool IsCustom() const {
    return group.find('.') != std::string::npos && group.find("k8s.io") == std::string::npos;
  }
  bool operator==(const ResourceType& o) const { return group == o.group && plural == o.plural; }
};

// Every served resource type.
const std::vector<ResourceType>& AllResources();
// By group and plural ("", "pods"); nullptr when unknown.
const ResourceType* FindResource(std::string_view group, std::string_view plural);
// By apiVersion and kind ("kubeflow.org/v1", "PyTorchJob"); nullptr when unknown.
const ResourceType* FindByKind(std::string_view api_version, std::string_view kind);

// Shorthands for the types the emulator's own components use.
const ResourceType& Pods();
const ResourceType& Services();
const ResourceType& Events();
const ResourceType& Namespaces();
const ResourceType& Nodes();
const ResourceType& ConfigMaps();
const ResourceType& Secrets();
const ResourceType& ServiceAccounts();
const ResourceType& PersistentVolumeClaims();
const ResourceType& PersistentVolumes();
const ResourceType& StorageClasses();
const ResourceType& PodDisruptionBudgets();
const ResourceType& PyTorchJobs();

}  // namespace pjemu::api
