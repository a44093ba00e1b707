// Server-side Table output (meta.k8s.io/v1 Table) for `kubectl get`: the training-operator
// CRD's printer columns for pytorchjobs (NAME, STATE = type of the last condition, AGE), the
// columns of kube-apiserver's printers for pods (READY, STATUS as kubectl computes it in
// api::PodStatusText, RESTARTS, AGE; IP, NODE, NOMINATED NODE, READINESS GATES under -o wide),
// services, namespaces, nodes and events, and NAME/AGE for anything else. Rows carry `object` as
// PartialObjectMetadata.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {

// True when the Accept header asks for a meta.k8s.io Table.
bool WantsTable(const std::string& accept);

// A Table of the items of a <Kind>List (its metadata.resourceVersion is kept).
Json ListToTable(const api::ResourceType& type, const Json& list, Time now);
// A one-row Table of `object`; `with_columns` false leaves columnDefinitions empty (watch
// events after the first, as the real server does).
Json ObjectToTable(const api::ResourceType& type, const Json& object, Time now,
                   bool with_columns = true);

}  // namespace pjemu::apiserver
