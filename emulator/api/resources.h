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

struct FieldRules;  // field_schema.h

// What the API server's admission chain does to writes of one type: mutating (defaulting), then
// validating. The store runs both on create and on update of the main resource (never on /status
// or /scale writes), after its own metadata checks and under its lock, so both must be pure
// functions of their arguments. nullptr = nothing to do.
struct Admission {
  // Fills in defaults on the incoming object before it is validated and stored: a pod's
  // imagePullPolicy (DefaultPod). The PyTorchJob operator defaults its in-memory copy
  // (SetDefaults, pytorchjob.h), never the stored object.
  void (*defaulter)(Json& object) = nullptr;
  // Refuses the write with a non-OK Status (422 Invalid or 403 Forbidden with details.causes).
  // `old` is the stored object on update, nullptr on create; warnings (may be null) collect the
  // response's Warning headers.
  Status (*validator)(const Json& object, const Json* old,
                      std::vector<std::string>* warnings) = nullptr;
};

// One of a custom resource's additionalPrinterColumns: `kubectl get` shows the value at
// json_path (".status.phase", ".status.conditions[-1:].type", ".metadata.creationTimestamp")
// under name; priority 1 only with -o wide. type is the OpenAPI type ("string", "integer",
// "date": shown as an age).
struct PrinterColumn {
  std::string name;
  std::string type;
  std::string json_path;
  int priority = 0;
  std::string description;
};

struct Workload;  // workload.h: what the CLI, the console and scenarios read of a job kind
struct KnownFields;  // known_fields.h: the field names the API server's field validation knows

// A /scale subresource (autoscaling/v1 Scale) as a CRD's subresources.scale declares it: the
// dotted JSON paths of the replicas it reads and writes (".spec.pytorchReplicaSpecs.Worker.
// replicas"), of the replicas it reports and of the label selector it reports.
struct ScalePaths {
  const char* spec_replicas;
  const char* status_replicas;
  const char* label_selector;
};

// An older version a CRD still serves beside its stored one (`served: true, storage: false`):
// what a request to it sends and receives is converted as the CRD's conversion webhook
// converts, and every answer carries the version's deprecation warning.
struct ServedVersion {
  std::string version;              // "v1beta1"
  std::string deprecation_warning;  // the CRD's deprecationWarning ("" when not deprecated)
  // In place; each sets apiVersion. to_stored also takes partial objects (a merge patch).
  void (*to_stored)(Json& object);
  void (*from_stored)(Json& object);
};

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string kind;      // "Pod"
  std::string plural;    // "pods"
  std::string singular;  // "pod"
  bool namespaced = true;
  bool has_status = true;  // a /status subresource exists (writes through it touch only .status)
  const ScalePaths* scale = nullptr;  // its /scale subresource; nullptr: none
  std::vector<std::string> short_names;
  Admission admission;
  // The type's merge rules for server-side apply and managedFields (field_schema.h): which lists
  // are associative and by which keys, which maps atomic. nullptr: ObjectMeta's rules, other
  // objects granular, other lists atomic (a schemaless object's defaults).
  FieldRules (*field_rules)() = nullptr;
  // A custom resource's printer columns (its CRD's additionalPrinterColumns); empty: the
  // default Name and Age, or the built-in kind's own table (apiserver/tables.cc).
  std::vector<PrinterColumn> printer_columns;
  // Non-null for a job kind (PyTorchJob, PyTorchTrainingJob, ...): how to read its outcome and
  // find its pods, so nothing outside the kind's own files asks which kind it is.
  const Workload* workload = nullptr;
  // The tree of known fields the API server's field validation checks bodies against (a CRD's
  // schema); nullptr: the API server's own knowledge of a built-in type, else open.
  const KnownFields* (*known_fields)() = nullptr;
  // Older versions served beside `version` (which is the one stored and preferred).
  std::vector<ServedVersion> older_versions;

  // The older version named `v`, nullptr when `v` is not one (the stored version included).
  const ServedVersion* OlderVersion(std::string_view v) const {
    for (const ServedVersion& s : older_versions) {
      if (s.version == v) return &s;
    }
    return nullptr;
  }
  bool Serves(std::string_view v) const { return v == version || OlderVersion(v) != nullptr; }

  // "v1" or "kubeflow.org/v1".
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "pods" or "pytorchjobs.kubeflow.org": the prefix of the real server's error messages.
  std::string PluralGroup() const { return group.empty() ? plural : plural + "." + group; }
  // "PodList".
  std::string ListKind() const { return kind + "List"; }
  // A custom resource (kubeflow.org, defined by a CRD on a cluster): its group is dotted and not
  // one of Kubernetes' own (core, policy, storage.k8s.io...). Custom resources decode as
  // unstructured objects and take no strategic merge patch.
  // SIGs' CRD groups (`*.x-k8s.io`, JobSet's) are custom too.
  bool IsCustom() const;
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
const ResourceType& Jobs();  // batch/v1
const ResourceType& PyTorchJobs();
const ResourceType& PyTorchTrainingJobs();
const ResourceType& TensorBoards();
const ResourceType& TrainJobs();  // trainer.kubeflow.org/v1alpha1
const ResourceType& TrainingRuntimes();
const ResourceType& ClusterTrainingRuntimes();
const ResourceType& JobSets();  // jobset.x-k8s.io/v1alpha2
// Every job kind (the rows with a workload), in table order.
std::vector<const ResourceType*> WorkloadTypes();

}  // namespace pjemu::api
