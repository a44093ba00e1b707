// The Training Operator v1.9's gang scheduling for a PyTorchJob (--gang-scheduler-name): the
// job's PodGroup, synced before its pods on each reconcile of an unfinished job and deleted
// once it finishes, and the decoration of each pod it creates. The PyTorchJob descriptor's two
// optional hooks (controller::KindDescriptor::prepare and ::decorate, pytorchjob.cc) call them
// with the cluster's controller::KindOptions: SyncPodGroup before the pass's writes, WithGang on
// each pod it creates.
//  - PodGroup: Volcano's (`volcano`, case-insensitive) or scheduler-plugins' (any other value
//    but "" and "None"), named as the job, its annotations, controller owner the job;
//    minMember = schedulingPolicy.minAvailable else every replica; minResources =
//    schedulingPolicy.minResources else the requests (limits where a container has no requests)
//    of the first minMember pods, replica types in order; Volcano: queue (default "default"),
//    priorityClassName; scheduler-plugins: scheduleTimeoutSeconds.
//  - Pods: schedulerName = the gang scheduler's (Volcano: volcano; else the flag's value) when
//    the template names none (a Warning SetPodTemplateSchedulerName when it names another);
//    Volcano: annotations scheduling.k8s.io/group-name and volcano.sh/task-spec;
//    scheduler-plugins: label scheduling.x-k8s.io/pod-group.
//  - Finished job: Normal JobTerminated `Job has been terminated. Deleting PodGroup`, then
//    SuccessfulDeletePodGroup `Deleted PodGroup: <job>`.
// Thread safety: functions over a Client, on the controller's loop thread.
#pragma once

#include <string>

#include "emulator/api/resources.h"
#include "emulator/client/client.h"
#include "emulator/controller/event_recorder.h"

namespace pjemu::pytorchjob {

struct GangOptions {
  std::string scheduler_name;  // --gang-scheduler-name; "" (or "None") = no gang scheduling
  bool enabled() const { return !scheduler_name.empty() && scheduler_name != "None"; }
  bool volcano() const;
  const api::ResourceType& type() const;   // the PodGroup kind
  std::string pod_scheduler_name() const;  // "volcano", or the flag's value
};

// The job's PodGroup as the operator writes it (`job` defaulted).
Json DesiredPodGroup(const Json& job, const GangOptions& gang);
// Creates or updates the PodGroup of an unfinished job, deletes that of a finished one (with
// the operator's events). The Client's errors.
Status SyncPodGroup(client::Client& client, controller::EventRecorder& recorder, const Json& job,
                    const GangOptions& gang);
// The pod to create, decorated for the gang (unchanged when gang scheduling is off).
Json WithGang(Json pod, const Json& job, const GangOptions& gang,
              controller::EventRecorder& recorder);

}  // namespace pjemu::pytorchjob
