// Kueue's vocabulary (kueue.x-k8s.io, v0.19): its objects' rows (ResourceFlavor, ClusterQueue,
// LocalQueue, Workload, WorkloadPriorityClass), their defaulting and refusals as Kueue's CRDs and
// webhooks give them, the labels and conditions it writes, a Workload's name, and its job
// webhooks (a queued job is suspended when created; its queue label is fixed while it runs).
// The admission of Workloads is emulator/kueue's; what a job kind offers Kueue is its row's
// api::Workload (suspend) and its controller's QueueIntegration (pod sets, start, stop).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "emulator/api/pod_resources.h"
#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api::kueue {

inline constexpr char kGroup[] = "kueue.x-k8s.io";
inline constexpr char kApiVersion[] = "kueue.x-k8s.io/v1beta2";

// On a job (the user's).
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
// On a Workload (Kueue's).
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
// On a started job's pod templates.
inline constexpr char kPodSetLabel[] = "kueue.x-k8s.io/podset";
inline constexpr char kLocalQueueLabel[] = "kueue.x-k8s.io/local-queue-name";
inline constexpr char kClusterQueueLabel[] = "kueue.x-k8s.io/cluster-queue-name";
inline constexpr char kWorkloadAnnotation[] = "kueue.x-k8s.io/workload";
// The runtimePatches manager of a TrainJob's placement.
inline constexpr char kManager[] = "kueue.x-k8s.io/manager";

// Workload condition types.
inline constexpr char kQuotaReserved[] = "QuotaReserved";
inline constexpr char kAdmitted[] = "Admitted";
inline constexpr char kEvicted[] = "Evicted";
inline constexpr char kPreempted[] = "Preempted";
inline constexpr char kRequeued[] = "Requeued";
inline constexpr char kPodsReady[] = "PodsReady";
inline constexpr char kFinished[] = "Finished";

const ResourceType& ResourceFlavors();
const ResourceType& ClusterQueues();
const ResourceType& LocalQueues();
const ResourceType& Workloads();
const ResourceType& WorkloadPriorityClasses();

// The rows' admission (resources.cc). Defaulters fill what Kueue's CRDs default; validators
// answer 422 for what the CRD schema refuses and 403 `admission webhook "v<kind>.kb.io" denied
// the request: ...` for what Kueue's webhooks refuse, each error naming its field.
void DefaultClusterQueue(Json& cq);
Status ValidateClusterQueue(const Json& cq, const Json* old, std::vector<std::string>* warnings);
void DefaultLocalQueue(Json& lq);
Status ValidateLocalQueue(const Json& lq, const Json* old, std::vector<std::string>* warnings);
void DefaultWorkload(Json& wl);
Status ValidateWorkload(const Json& wl, const Json* old, std::vector<std::string>* warnings);
Status ValidateResourceFlavor(const Json& rf, const Json* old, std::vector<std::string>* warnings);
Status ValidateWorkloadPriorityClass(const Json& wpc, const Json* old,
                                     std::vector<std::string>* warnings);

// Kueue's job webhooks for a kind it integrates (its row's workload has queue_framework), run
// by the API server after the kind's own admission: on create, a job with a queue label and no
// controller owner is suspended (the user need not create it suspended); the label must be a
// DNS-1123 subdomain and is immutable while the job is not suspended. Other types: nothing.
void MutateQueuedJob(const ResourceType& type, Json& job, const Json* old);
Status ValidateQueuedJob(const ResourceType& type, const Json& job, const Json* old);

// kueue.x-k8s.io/v1beta1, served beside the stored v1beta2 with its deprecation warning and
// Kueue's conversion (kueue_conversion.cc); a partial object (a merge patch) converts too.
const ServedVersion& V1beta1();
void V1beta1ToStored(Json& object);
void V1beta1FromStored(Json& object);

// The Workload of a job: `<lowercase kind>-<name>-<h>`, h the first 5 hex digits of
// SHA-1("<Kind>\n<group>\n<name>\n<uid>"), the prefix cut to 247 characters.
std::string WorkloadName(const std::string& kind, const std::string& group,
                         const std::string& name, const std::string& uid);

// One group of a job's pods as Kueue counts them: a name ("main", "master", a replicated job's),
// how many pods, and their template ({metadata, spec}).
struct PodSet {
  std::string name;
  std::int64_t count = 1;
  Json pod_template;
};
Json PodSetsJson(const std::vector<PodSet>& sets);
std::vector<PodSet> PodSetsOf(const Json& workload);  // its spec.podSets

// What admission adds to one pod set's template when the job starts: the flavors' nodeLabels
// (nodeSelector) and tolerations, Kueue's labels and the workload annotation.
struct PodSetPlacement {
  std::string name;
  std::map<std::string, std::string> node_selector;
  Json tolerations = Json::array();
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};
// Adds a placement to a pod template ({metadata, spec}); an error names the conflicting
// nodeSelector key (`conflict for nodeSelector: <key>`).
Status Place(Json& pod_template, const PodSetPlacement& placement);

// A Workload's conditions (metav1.Condition): the one of `type`, or nullptr; True?
const Json* Condition(const Json& workload, const std::string& type);
bool IsTrue(const Json& workload, const std::string& type);
// meta.SetStatusCondition on status.conditions: lastTransitionTime moves only when the status
// changes; returns whether anything changed.
bool SetCondition(Json& workload, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, Time now);

// Kueue's queue order inside a ClusterQueue: higher spec.priority, then the older
// creationTimestamp, then uid.
bool QueueOrderBefore(const Json& a, const Json& b);
// A Workload waiting for quota: no status.admission, active, not Finished.
bool IsPending(const Json& workload);
// The key (api::ObjectKey) of a Workload's LocalQueue: "<namespace>/<spec.queueName>".
std::string LocalQueueKey(const Json& workload);
// A Workload's ClusterQueue: its admission's, else its LocalQueue's (local_queues by
// ObjectKey); "" when neither says.
std::string ClusterQueueOf(const Json& workload, const std::map<std::string, Json>& local_queues);

// Resource amounts as Kueue prints them in status (Quantity strings: "2", "500m", "1Gi").
Json QuantityJson(const std::string& resource, std::int64_t amount);
// A pod set's per-pod requests (the scheduler's units: millicores, bytes, devices).
ResourceList PodSetRequests(const PodSet& set);

}  // namespace pjemu::api::kueue
