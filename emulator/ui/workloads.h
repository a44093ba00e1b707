// What the console shows of every job kind, read from the one table of kinds (the resource
// rows with a workload, api::WorkloadTypes()): never a list of kinds of its own, in C++ or in
// the page's JavaScript. The job list reads WorkloadTable, a job's page OwnerTree.
// Thread safety: reads the Store (itself thread-safe); no state of its own.
#pragma once

#include <string>

#include "emulator/api/resources.h"
#include "emulator/store/store.h"

namespace pjemu::ui {

// {"kinds": [{kind, apiVersion, plural, namespaced}], "items": [{kind, apiVersion, plural,
// namespace, name, uid, created, state, reason, message, finished, succeeded, podSelector,
// object}]}:
// every job kind, then every object of them with the kind's own state (api::StateOf) and
// the label selector of its pods; `queue` its Kueue LocalQueue ("" when not queued). A kind the store cannot list is skipped.
Json WorkloadTable(const store::Store& store);

// A queued job's place in Kueue (the job's kueue.x-k8s.io/queue-name label; null without one):
// {localQueue, state: NoWorkload | Pending | Admitted | Evicted | Finished, and with its
// Workload: workload, clusterQueue, conditions, admission, message (QuotaReserved's),
// position and pending (1-based among its ClusterQueue's pending Workloads in Kueue's order,
// while Pending)}.
Json QueueInfo(const store::Store& store, const Json& job);

// The owner tree of one object: {kind, apiVersion, name, uid, state (a job kind's) or phase
// (a pod's: its kubectl STATUS text), object, children: [...]}, the children being the
// objects of its namespace whose controller ownerReference names it (TrainJob -> JobSet ->
// Jobs -> pods, a queued job's Kueue Workload), sorted by kind and name, at most `max_depth`
// levels deep; a queued job's root has `queue` (QueueInfo). Errors: kNotFound.
Result<Json> OwnerTree(const store::Store& store, const api::ResourceType& type,
                       const std::string& ns, const std::string& name, int max_depth = 6);

}  // namespace pjemu::ui
