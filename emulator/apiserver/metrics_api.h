// metrics.k8s.io/v1beta1 as metrics-server serves it behind its APIService, so `kubectl top pod`
// and `kubectl top node` (and dashboards) work: PodMetrics and NodeMetrics, get and list
// (namespaced and across namespaces for pods; labelSelector and fieldSelector as for the objects
// they describe), and the group's own discovery documents. Figures come from an
// api::ResourceUsage: per container `cpu` in nanocores ("12345n", canonical: "5m" when it is a
// round number) and `memory` as the working set (BinarySI, "123Ki"), `timestamp` (the end of
// the window, RFC 3339 seconds) and `window` (a Go duration, "10.5s"), as metrics-server writes
// them. Pods that are not Running, or have no figures yet, are left out of lists and are 404
// `podmetrics.metrics.k8s.io "ns/name" not found` on get, as metrics-server answers.
// The server lists the group in /apis (both discovery formats) when it serves it.
// Thread safety: the Mount's handler runs on any io thread; the store and usage are
// thread-safe.
#pragma once

#include <string>

#include "emulator/api/resource_usage.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/common/clock.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver {

inline constexpr char kMetricsGroup[] = "metrics.k8s.io";
inline constexpr char kMetricsVersion[] = "v1beta1";

// The handler of everything under /apis/metrics.k8s.io (store, usage and clock must outlive it).
Mount MakeMetricsMount(const store::Store& store, const api::ResourceUsage& usage,
                       const Clock& clock);

// "12345n", "5m", "2" (a resource.Quantity of nanocores, canonical DecimalSI).
std::string FormatNanocores(std::int64_t nanocores);

}  // namespace pjemu::apiserver
