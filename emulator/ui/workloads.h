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
// the label selector of its pods. A kind the store cannot list is skipped.
Json WorkloadTable(const store::Store& store);

// The owner tree of one object: {kind, apiVersion, name, uid, state (a job kind's) or phase
// (a pod's: its kubectl STATUS text), object, children: [...]}, the children being the
// objects of its namespace whose controller ownerReference names it (TrainJob -> JobSet ->
// Jobs -> pods), sorted by kind and name, at most `max_depth` levels deep. Errors: kNotFound.
Result<Json> OwnerTree(const store::Store& store, const api::ResourceType& type,
                       const std::string& ns, const std::string& name, int max_depth = 6);

}  // namespace pjemu::ui
