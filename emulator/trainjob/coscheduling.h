// Trainer v2.3.0's coscheduling plugin (pkg/runtime/framework/plugins/coscheduling), for a
// runtime with `podGroupPolicy.coscheduling`: a scheduler-plugins PodGroup
// (scheduling.x-k8s.io/v1alpha1) per TrainJob, which emulator/scheduler's coscheduling Permit
// binds all or nothing.
//  - EnforcePodGroupPolicy: the label scheduling.x-k8s.io/pod-group: <trainjob> on the pod
//    template of every replicatedJob (LabelPodTemplates; build.h step 3). No schedulerName:
//    upstream sets none, so the runtime's pod templates must name the scheduler
//    (`scheduler-plugins-scheduler`), else the default scheduler binds the pods one by one.
//  - Build: the PodGroup named and namespaced as the TrainJob, the TrainJob its controller
//    owner; minMember = the pods of every replicatedJob (each counts its parallelism, at least
//    1, the trainer step numNodes; `replicas` is not multiplied in, as upstream); minResources =
//    each replicatedJob's count x its pod's requests (PodSpecRequests: requests only, no
//    defaulting from limits); scheduleTimeoutSeconds = the policy's.
//  - Applied when no PodGroup of that name exists, or while the TrainJob is suspended
//    (PodGroupToApply); otherwise left as it is. No events, no conditions: a failed write is
//    the pass's error.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::trainjob {

// The runtime has podGroupPolicy.coscheduling.
bool Coscheduled(const Json& runtime);

// The pod-group label on every replicatedJob's pod template of `jobset`.
void LabelPodTemplates(Json& jobset, const std::string& trainjob_name);

// The PodGroup for the TrainJob whose JobSet (as DesiredJobSet builds it) is `jobset`.
// REQUIRES: Coscheduled(runtime).
Json DesiredPodGroup(const Json& trainjob, const Json& runtime, const Json& jobset);

// What the pass writes: `desired` when there is no PodGroup (`current` nullptr); while the
// TrainJob is suspended, `current` with desired's spec fields and ownerReferences when they
// differ (server-side apply of the fields the plugin owns); else nullopt.
std::optional<Json> PodGroupToApply(const Json& trainjob, const Json* current, const Json& desired);

}  // namespace pjemu::trainjob
