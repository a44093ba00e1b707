// Pod-level views of resources.requests/limits, shared by the scheduler (requests against node
// allocatable) and the kubelet (memory limits, OMP_NUM_THREADS, GPU counts, qosClass). Built on
// api::Quantity (resource_quantity.h). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "emulator/api/resource_quantity.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// Resource name -> amount in the unit the scheduler compares: millicores for "cpu", whole
// units (rounded up) for everything else (bytes, devices, pods).
using ResourceList = std::map<std::string, std::int64_t>;
// kBadRequest with Kubernetes' quantity message, prefixed with "[<name>]".
Result<ResourceList> ParseResourceList(const Json& list);
// One quantity of `resource` in those units (a Kueue quota); 0 when absent or malformed.
std::int64_t ResourceAmount(const std::string& resource, const Json& quantity);

// What a pod asks the scheduler for: max(sum over containers, max over init containers) of
// each container's requests, where a resource with only a limit requests its limit (the API
// server's defaulting). Errors name the field: "spec.containers[0].resources.limits[cpu]: ...".
Result<ResourceList> PodRequests(const Json& pod);
// A container's limits (empty when none or malformed).
ResourceList ContainerLimits(const Json& container);
// A container's requests, a resource with only a limit requesting its limit (the API server's
// defaulting); empty when none or malformed.
ResourceList ContainerRequests(const Json& container);
// A resources map summed as resource.Quantity sums (corev1.ResourceList arithmetic in Go): the
// amounts exact to a thousandth, and each resource printed in the format of the first quantity
// that set it (the init container that raised it for Max): "2Gi" twice is "4Gi", "2G" twice
// "4G", "0.8" twice "1600m". What a PodGroup's spec.minResources is written from.
class QuantityList {
 public:
  // Adds `times` x each quantity of `list` (a resources.requests or .limits map); a malformed
  // quantity is skipped.
  void Add(const Json& list, std::int64_t times = 1);
  void Add(const QuantityList& other, std::int64_t times = 1);
  // Raises each resource to at least `other`'s, taking its format where it does
  // (maxResourceList: an init container's requests against the pod's).
  void Max(const QuantityList& other);
  bool empty() const { return amounts_.empty(); }
  // {"cpu": "1600m", "memory": "4Gi"}: an empty object when nothing was added.
  Json ToJson() const;

 private:
  struct Amount {
    std::int64_t milli = 0;
    QuantityFormat format = QuantityFormat::kDecimalSI;
  };
  std::map<std::string, Amount> amounts_;
};

// What component-helpers' PodRequests computes over a pod spec that no API server defaulted
// (a pod template inside a custom resource, as Trainer v2 reads its runtime): the containers'
// and the sidecars' (init containers with restartPolicy Always) requests summed, raised to each
// other init container's requests plus the sidecars started before it, plus spec.overhead. A
// resource with only a limit requests nothing here (no defaulting).
QuantityList PodSpecRequests(const Json& pod_spec);

// The Guaranteed / Burstable / BestEffort class of a pod (status.qosClass).
std::string PodQosClass(const Json& pod);

}  // namespace pjemu::api
