// PodDisruptionBudgets (policy/v1) and the pods/eviction subresource: a budget's admission (the
// resource table's row), the status kube-controller-manager's disruption controller computes
// from the pods the budget selects (DisruptionStatus), and the eviction's decision against the
// budgets of a pod (CheckEviction, pkg/registry/core/pod/storage/eviction.go), with the real
// messages. The API server computes a budget's status from the store when it serves or uses the
// budget (a deviation: there is no disruption controller writing it; apiserver/README.md).
// Thread safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// The policy/v1 cause type of an eviction refused by a budget.
inline constexpr char kDisruptionBudgetCause[] = "DisruptionBudget";
inline constexpr char kEvictionRefusedMessage[] =
    "Cannot evict pod as it would violate the pod's disruption budget.";

// ValidatePodDisruptionBudget: minAvailable / maxUnavailable (non-negative ints or percentages
// up to 100%, not both), spec.selector, unhealthyPodEvictionPolicy; 422 naming the field.
Status ValidatePodDisruptionBudget(const Json& pdb, const Json* old,
                                   std::vector<std::string>* warnings);

// The scale (spec.replicas of its /scale) of the controller a pod's controller ownerReference
// names, in the pod's namespace; nullopt when that controller is missing or has no scale.
using ControllerScale =
    std::function<std::optional<std::int64_t>(const Json& pod, const Json& controller_ref)>;

// The pods the budget selects: those of its namespace its selector matches (policy/v1: `{}`
// selects every pod, an absent selector none). Pointers into `pods`.
std::vector<const Json*> PodsOfBudget(const Json& pdb, const std::vector<Json>& pods);

// The disruption controller's status for `pdb` over `pods` (all pods of its namespace):
// currentHealthy (Ready pods not being deleted), desiredHealthy and expectedPods (minAvailable
// as an int: that number and the selected pods; a percentage or maxUnavailable: from the
// controllers' scales, each controller once), disruptionsAllowed (currentHealthy -
// desiredHealthy, at least 0), observedGeneration and the DisruptionAllowed condition
// (SufficientPods, InsufficientPods; SyncFailed with the controller's message when a selected
// pod has no controller with a scale). disruptedPods and an unchanged condition's
// lastTransitionTime are kept from the stored status.
Json DisruptionStatus(const Json& pdb, const std::vector<Json>& pods, const ControllerScale& scale,
                      Time now);

// The eviction's decision for `pod` given the budgets of its namespace (each with its status
// computed): OK = delete the pod; 429 TooManyRequests kEvictionRefusedMessage with a
// DisruptionBudget cause when the budget allows no disruption; 500 when two budgets select the
// pod; 403 when a budget's disruptionsAllowed is negative. Terminal, Pending and terminating pods,
// and unready pods of a budget that is already met (IfHealthyBudget) or that says AlwaysAllow,
// skip the budget, as in kube-apiserver. Budgets with an empty selector are ignored.
Status CheckEviction(const Json& pod, const std::vector<Json>& budgets);

}  // namespace pjemu::api
