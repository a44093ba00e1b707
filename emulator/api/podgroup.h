// PodGroups: the gang of pods a gang scheduler binds all or nothing. Two kinds, as the Training
// Operator v1.9 creates them with --gang-scheduler-name:
//  - scheduler-plugins' `scheduling.x-k8s.io/v1alpha1` PodGroup (spec minMember, minResources,
//    scheduleTimeoutSeconds; status phase Pending|Scheduling|Running|Finished|Failed, running,
//    succeeded, failed, occupiedBy, scheduleStartTime); a pod joins with the label
//    scheduling.x-k8s.io/pod-group: <name>;
//  - Volcano's `scheduling.volcano.sh/v1beta1` PodGroup (spec minMember, minTaskMember, queue,
//    priorityClassName, minResources; status phase Pending|Inqueue|Running|Unknown|Completed,
//    conditions, running, succeeded, failed); a pod joins with the annotation
//    scheduling.k8s.io/group-name: <name>.
// Also the status each kind's controller writes from its pods' phases.
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";
inline constexpr char kVolcanoGroupAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kVolcanoTaskSpecAnnotation[] = "volcano.sh/task-spec";
inline constexpr char kSchedulerPluginsSchedulerName[] = "scheduler-plugins-scheduler";
inline constexpr char kVolcanoSchedulerName[] = "volcano";
// The coscheduling plugin's Permit timeout when the group sets none (permitWaitingTimeSeconds
// of the as-a-second-scheduler chart is 10; the plugin's own default 60).
inline constexpr int kDefaultPermitWaitingSeconds = 60;

// The schedulerName the Training Operator gives a gang's pods for its --gang-scheduler-name:
// kVolcanoSchedulerName for `volcano` (any case), else the flag's value.
std::string GangPodSchedulerName(const std::string& gang_scheduler_name);

const ResourceType& SchedulerPluginsPodGroups();  // scheduling.x-k8s.io/v1alpha1
const ResourceType& VolcanoPodGroups();           // scheduling.volcano.sh/v1beta1

// The group a pod belongs to: its kind and name, nullopt when it names none.
struct PodGroupRef {
  const ResourceType* type = nullptr;
  std::string name;
};
std::optional<PodGroupRef> PodGroupOf(const Json& pod);

// spec.minMember (0 when absent) and spec.scheduleTimeoutSeconds (nullopt when absent).
int MinMember(const Json& pod_group);
std::optional<int> ScheduleTimeoutSeconds(const Json& pod_group);

// The group's pods as its controller counts them.
struct GangCounts {
  int pods = 0;       // every pod of the group (finished ones too)
  int scheduled = 0;  // bound to a node, not finished
  int running = 0;
  int succeeded = 0;
  int failed = 0;
};
GangCounts CountGang(const std::vector<const Json*>& pods);

// The status the kind's controller writes, from the current one and the counts:
// scheduler-plugins' podgroup controller (phases as upstream's state machine) or Volcano's
// session close (Pending/Inqueue/Running/Completed, with an Unschedulable condition carrying
// `unschedulable` when that is not "").
Json PodGroupStatus(const ResourceType& type, const Json& pod_group, const GangCounts& counts,
                    const std::string& unschedulable, Time now);

// Admission of a PodGroup: kInvalid naming the field (spec.minMember: must be >= 0, ...).
Status ValidatePodGroup(const Json& pod_group, const Json* old, std::vector<std::string>* warnings);

}  // namespace pjemu::api
