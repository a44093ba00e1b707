#include "emulator/api/resources.h"

#include "emulator/api/batchjob.h"
#include "emulator/api/config_validation.h"
#include "emulator/api/disruption.h"
#include "emulator/api/field_schema.h"
#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/known_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/pod_validation.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/t9k_validation.h"
#include "emulator/api/trainjob.h"
#include "emulator/api/workload.h"

namespace pjemu::api {

// Each job kind's workload table, defined in the kind's own files.
extern const Workload kPyTorchJobWorkload;
namespace t9k {
extern const Workload kWorkload;
}
namespace batchjob {
extern const Workload kWorkload;
}
namespace trainjob {
extern const Workload kWorkload;
}
namespace jobset {
extern const Workload kWorkload;
}

namespace {

// The CRD's scale subresource: what /scale reads and writes on a PyTorchJob.
const ScalePaths kPyTorchJobScale = {kScaleSpecReplicasPath, kScaleStatusReplicasPath,
                                     kScaleLabelSelectorPath};

const PrinterColumn kAgeColumn = {"Age", "date", ".metadata.creationTimestamp", 0, ""};

}  // namespace

const std::vector<ResourceType>& AllResources() {
  // group, version, kind, plural, singular, namespaced, has_status, scale paths, short names,
  // admission {defaulter, validator}, field rules (field_schema.h), printer columns, workload,
  // known fields (known_fields.h).
  // clang-format off
  static const std::vector<ResourceType> kAll = {
      {"", "v1", "Namespace", "namespaces", "namespace", false, true, nullptr, {"ns"}, {}, NamespaceFieldRules},
      {"", "v1", "Node", "nodes", "node", false, true, nullptr, {"no"}, {}, NodeFieldRules},
      {"", "v1", "Pod", "pods", "pod", true, true, nullptr, {"po"}, {DefaultPod, ValidatePod}, PodFieldRules},
      {"", "v1", "Service", "services", "service", true, true, nullptr, {"svc"}, {}, ServiceFieldRules},
      {"", "v1", "Event", "events", "event", true, false, nullptr, {"ev"}, {}, EventFieldRules},
      {"", "v1", "ConfigMap", "configmaps", "configmap", true, false, nullptr, {"cm"},
       {nullptr, ValidateConfigMap}, ConfigDataFieldRules},
      {"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true, false, nullptr, {"sa"},
       {}},
      {"", "v1", "Secret", "secrets", "secret", true, false, nullptr, {},
       {DefaultSecret, ValidateSecret}, ConfigDataFieldRules},
      {"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", true,
       true, nullptr, {"pvc"},
       {DefaultPersistentVolumeClaim, ValidatePersistentVolumeClaim},
       PersistentVolumeClaimFieldRules},
      {"", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", false, true, nullptr,
       {"pv"}, {DefaultPersistentVolume, ValidatePersistentVolume},
       PersistentVolumeFieldRules},
      {"storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", false, false,
       nullptr, {"sc"}, {DefaultStorageClass, ValidateStorageClass}, StorageClassFieldRules},
      // Built in: its table is kubectl's own (apiserver/tables.cc), not printer columns.
      {"batch", "v1", "Job", "jobs", "job", true, true, nullptr, {},
       {batchjob::SetDefaults, batchjob::Validate}, nullptr, {}, &batchjob::kWorkload},
      {"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", "pytorchjob", true, true,
       &kPyTorchJobScale, {}, {nullptr, ValidatePyTorchJob}, PyTorchJobFieldRules,
       {{"State", "string", ".status.conditions[-1:].type", 0, ""}, kAgeColumn},
       &kPyTorchJobWorkload, PyTorchJobKnownFields},
      // Kubeflow Trainer v2 (its CRDs' printer columns), before JobSet: a TrainJob's JobSet
      // has its name, and a job named ns/name is the TrainJob (client::GetJob).
      {"trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs", "trainjob", true, true, nullptr,
       {}, {trainjob::SetDefaults, trainjob::Validate}, nullptr,
       {{"State", "string", ".status.conditions[-1:].type", 0, ""}, kAgeColumn},
       &trainjob::kWorkload},
      {"trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes",
       "trainingruntime", true, false, nullptr, {},
       {trainjob::SetRuntimeDefaults, trainjob::ValidateRuntime}, nullptr, {kAgeColumn}},
      {"trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes",
       "clustertrainingruntime", false, false, nullptr, {},
       {trainjob::SetRuntimeDefaults, trainjob::ValidateRuntime}, nullptr, {kAgeColumn}},
      {"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", "jobset", true, true, nullptr, {},
       {jobset::SetDefaults, jobset::Validate}, nullptr,
       {{"TerminalState", "string", ".status.terminalState", 0, "Final state of JobSet"},
        {"Restarts", "string", ".status.restarts", 0, "Number of restarts"},
        {"Completed", "string", ".status.conditions[?(@.type==\"Completed\")].status", 0, ""},
        {"Suspended", "string", ".spec.suspend", 0, "JobSet suspended"},
        kAgeColumn},
       &jobset::kWorkload},
      // T9k's kinds. Their CRDs are not public: the columns are an assumption (README).
      {"batch.tensorstack.dev", "v1beta1", "PyTorchTrainingJob", "pytorchtrainingjobs",
       "pytorchtrainingjob", true, true, nullptr, {"pj"}, {nullptr, t9k::Validate}, nullptr,
       {{"Phase", "string", ".status.phase", 0, "The phase of the job."},
        kAgeColumn,
        {"Backoff", "integer", ".status.backoffCount", 1, "Restarts counted against backoffLimit."},
        {"Running", "integer", ".status.aggregate.running", 1, "Running replicas."},
        {"Succeeded", "integer", ".status.aggregate.succeeded", 1, "Succeeded replicas."},
        {"Failed", "integer", ".status.aggregate.failed", 1, "Failed replicas."}},
       &t9k::kWorkload},
      {"tensorstack.dev", "v1beta1", "TensorBoard", "tensorboards", "tensorboard", true, true,
       nullptr, {}, {}, nullptr,
       {{"Phase", "string", ".status.phase", 0, "The phase of the TensorBoard."}, kAgeColumn}},
      // Gang schedulers' PodGroups (--gang-scheduler-name): scheduler-plugins' and Volcano's CRDs.
      {"scheduling.x-k8s.io", "v1alpha1", "PodGroup", "podgroups", "podgroup", true, true, nullptr,
       {"pg", "pgs"}, {nullptr, ValidatePodGroup}, nullptr,
       {{"Phase", "string", ".status.phase", 0, ""},
        {"MinMember", "integer", ".spec.minMember", 0, ""},
        {"Running", "integer", ".status.running", 0, ""},
        {"Succeeded", "integer", ".status.succeeded", 0, ""},
        {"Failed", "integer", ".status.failed", 0, ""},
        kAgeColumn}},
      {"scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", "podgroup", true, true, nullptr,
       {"pg", "podgroup-v1beta1"}, {nullptr, ValidatePodGroup}, nullptr,
       {{"STATUS", "string", ".status.phase", 0, ""},
        {"minMember", "integer", ".spec.minMember", 0, ""},
        {"RUNNINGS", "integer", ".status.running", 0, ""},
        kAgeColumn,
        {"QUEUE", "string", ".spec.queue", 1, ""}}},
      // Kueue v0.19 (kueue.x-k8s.io/v1beta2, its CRDs' printer columns and short names).
      {"kueue.x-k8s.io", "v1beta2", "ResourceFlavor", "resourceflavors", "resourceflavor", false,
       false, nullptr, {"flavor", "flavors", "rf"}, {nullptr, kueue::ValidateResourceFlavor},
       nullptr, {}, nullptr, nullptr, {kueue::V1beta1()}},
      {"kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues", "clusterqueue", false, true,
       nullptr, {"cq"}, {kueue::DefaultClusterQueue, kueue::ValidateClusterQueue}, nullptr,
       {{"Cohort", "string", ".spec.cohortName", 0, "Cohort that this ClusterQueue belongs to"},
        {"Strategy", "string", ".spec.queueingStrategy", 1,
         "The queueing strategy used to prioritize workloads"},
        {"Pending Workloads", "integer", ".status.pendingWorkloads", 0,
         "Number of pending workloads"},
        {"Admitted Workloads", "integer", ".status.admittedWorkloads", 1,
         "Number of admitted workloads that haven't finished yet"}},
       nullptr, nullptr, {kueue::V1beta1()}},
      {"kueue.x-k8s.io", "v1beta2", "LocalQueue", "localqueues", "localqueue", true, true, nullptr,
       {"queue", "queues", "lq"}, {kueue::DefaultLocalQueue, kueue::ValidateLocalQueue}, nullptr,
       {{"ClusterQueue", "string", ".spec.clusterQueue", 0, "Backing ClusterQueue"},
        {"Pending Workloads", "integer", ".status.pendingWorkloads", 0,
         "Number of pending workloads"},
        {"Admitted Workloads", "integer", ".status.admittedWorkloads", 0,
         "Number of admitted workloads that haven't finished yet."}},
       nullptr, nullptr, {kueue::V1beta1()}},
      {"kueue.x-k8s.io", "v1beta2", "Workload", "workloads", "workload", true, true, nullptr,
       {"kwl", "kueueworkload", "kueueworkloads"}, {kueue::DefaultWorkload, kueue::ValidateWorkload},
       nullptr,
       {{"Queue", "string", ".spec.queueName", 0, "Name of the queue this workload was submitted to"},
        {"Reserved in", "string", ".status.admission.clusterQueue", 0,
         "Name of the ClusterQueue where the workload is reserving quota"},
        {"Admitted", "string", ".status.conditions[?(@.type==\"Admitted\")].status", 0,
         "Admission status"},
        {"Finished", "string", ".status.conditions[?(@.type==\"Finished\")].status", 0,
         "Workload finished"},
        kAgeColumn},
       nullptr, nullptr, {kueue::V1beta1()}},
      {"kueue.x-k8s.io", "v1beta2", "WorkloadPriorityClass", "workloadpriorityclasses",
       "workloadpriorityclass", false, false, nullptr, {"wpc"},
       {nullptr, kueue::ValidateWorkloadPriorityClass}, nullptr,
       {{"Value", "integer", ".value", 0, "Value of workloadPriorityClass's Priority"}},
       nullptr, nullptr, {kueue::V1beta1()}},
      {"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       "horizontalpodautoscaler", true, true, nullptr, {"hpa"}, {}},
      {"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", true,
       true, nullptr, {"pdb"}, {nullptr, ValidatePodDisruptionBudget},
       PodDisruptionBudgetFieldRules},
  };
  // clang-format on
  return kAll;
}

bool ResourceType::IsCustom() const {
  auto ends_with = [&](std::string_view suffix) {
    return group.size() >= suffix.size() &&
           group.compare(group.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (group.find('.') == std::string::npos) return false;
  return group.find("k8s.io") == std::string::npos || ends_with(".x-k8s.io");
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

// Each accessor looks its type up once (AllResources() is built once and never changes): the
// store and the actors ask for these on every write.
#define PJEMU_TYPE(name, group, plural)                             \
  const ResourceType& name() {                                      \
    static const ResourceType& type = *FindResource(group, plural); \
    return type;                                                    \
  }
PJEMU_TYPE(Pods, "", "pods")
PJEMU_TYPE(Services, "", "services")
PJEMU_TYPE(Events, "", "events")
PJEMU_TYPE(Namespaces, "", "namespaces")
PJEMU_TYPE(Nodes, "", "nodes")
PJEMU_TYPE(ConfigMaps, "", "configmaps")
PJEMU_TYPE(Secrets, "", "secrets")
PJEMU_TYPE(ServiceAccounts, "", "serviceaccounts")
PJEMU_TYPE(PersistentVolumeClaims, "", "persistentvolumeclaims")
PJEMU_TYPE(PersistentVolumes, "", "persistentvolumes")
PJEMU_TYPE(StorageClasses, "storage.k8s.io", "storageclasses")
PJEMU_TYPE(PodDisruptionBudgets, "policy", "poddisruptionbudgets")
PJEMU_TYPE(Jobs, "batch", "jobs")
PJEMU_TYPE(PyTorchJobs, "kubeflow.org", "pytorchjobs")
PJEMU_TYPE(PyTorchTrainingJobs, "batch.tensorstack.dev", "pytorchtrainingjobs")
PJEMU_TYPE(TrainJobs, "trainer.kubeflow.org", "trainjobs")
PJEMU_TYPE(TrainingRuntimes, "trainer.kubeflow.org", "trainingruntimes")
PJEMU_TYPE(ClusterTrainingRuntimes, "trainer.kubeflow.org", "clustertrainingruntimes")
PJEMU_TYPE(JobSets, "jobset.x-k8s.io", "jobsets")
PJEMU_TYPE(TensorBoards, "tensorstack.dev", "tensorboards")

#undef PJEMU_TYPE

std::vector<const ResourceType*> WorkloadTypes() {
  std::vector<const ResourceType*> out;
  for (const ResourceType& r : AllResources()) {
    if (r.workload) out.push_back(&r);
  }
  return out;
}

bool SpecSuspended(const Json& job) { return FieldAt(job, {"spec", "suspend"}) == Json(true); }

void SetSpecSuspended(Json& job, bool suspend) { job["spec"]["suspend"] = suspend; }

WorkloadState StateOf(const ResourceType& type, const Json& job) {
  return type.workload ? type.workload->state(job) : WorkloadState{};
}

const ResourceType* WorkloadTypeOf(const Json& object) {
  if (!object.is_object()) return nullptr;
  const ResourceType* type = FindByKind(object.value("apiVersion", ""), object.value("kind", ""));
  return type && type->workload ? type : nullptr;
}

WorkloadState StateOf(const Json& object) {
  const ResourceType* type = WorkloadTypeOf(object);
  return type ? StateOf(*type, object) : WorkloadState{};
}

std::vector<FieldError> TemplateVolumeErrors(const ResourceType& type, const Json& job) {
  std::vector<FieldError> errs;
  if (!type.workload) return errs;
  for (const PodTemplateRef& t : type.workload->pod_templates(job)) {
    for (FieldError& e : PodSpecVolumeErrors(t.spec, t.name + ".template.spec")) {
      errs.push_back(std::move(e));
    }
  }
  return errs;
}

}  // namespace pjemu::api
