// Pod-level views of resources.requests/limits, shared by the scheduler (requests against node
// allocatable) and the kubelet (memory limits, OMP_NUM_THREADS, GPU counts, qosClass). Built on
// api::Quantity (resource_quantity.h). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

// Resource name -> amount in the unit the scheduler compares: millicores for "cpu", whole
// units (rounded up) for everything else (bytes, devices, pods).
using ResourceList = std::map<std::string, std::int64_t>;
// kBadRequest with Kubernetes' quantity message, prefixed with "[<name>]".
Result<ResourceList> ParseResourceList(const Json& list);

// What a pod asks the scheduler for: max(sum over containers, max over init containers) of
// each container's requests, where a resource with only a limit requests its limit (the API
// server's defaulting). Errors name the field: "spec.containers[0].resources.limits[cpu]: ...".
Result<ResourceList> PodRequests(const Json& pod);
// A container's limits (empty when none or malformed).
ResourceList ContainerLimits(const Json& container);
// A container's requests, a resource with only a limit requesting its limit (the API server's
// defaulting); empty when none or malformed.
ResourceList ContainerRequests(const Json& container);
// The Guaranteed / Burstable / BestEffort class of a pod (status.qosClass).
std::string PodQosClass(const Json& pod);

}  // namespace pjemu::api
