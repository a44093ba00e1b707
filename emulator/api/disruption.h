// PodDisruptionBudgets (policy/v1) and the pods/eviction subresource: a budget's admission (the
// resource table's row), the status kube-controller-manager's disruption controller computes
// from the pods the budget selects (DisruptionStatus), and the eviction's decision against the
// budgets of a pod (CheckEviction, pkg/registry/core/pod/storage/eviction.go), with the real
// messages. The API server computes a budget's status from the store when it serves or uses the
// budget (a deviation: there is no disruption controller writing it; apiserver/README.md).
// BudgetWithStatus and EvictPod gather what those need through an ObjectAccess (the API server's
// Store, or a client::Client), so the served subresource and LocalClient::Evict share one
// gather-decide-delete.
// Thread safety: pure functions of their arguments; BudgetWithStatus and EvictPod as their
// ObjectAccess (EvictPod does not serialize evictions: see its comment).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
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

// The Scale's spec.replicas of an object of `type` (the value at its scale's spec_replicas
// path; 0 when unset). REQUIRES: type.scale.
std::int64_t ScaleSpecReplicas(const ResourceType& type, const Json& object);

// What BudgetWithStatus and EvictPod read and delete through; each call answers as the
// client::Client call of the same name (List: every object of the namespace, a <Kind>List).
class ObjectAccess {
 public:
  virtual ~ObjectAccess() = default;
  virtual Result<Json> Get(const ResourceType& type, std::string_view ns,
                           std::string_view name) = 0;
  virtual Result<Json> List(const ResourceType& type, std::string_view ns) = 0;
  virtual Result<Json> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                              const DeleteOptions& options) = 0;
};

// The ObjectAccess of anything with the Client's Get, List (with ListOptions) and Delete: the
// store::Store, a client::Client. `over` must outlive it.
template <class T>
class AccessOver final : public ObjectAccess {
 public:
  explicit AccessOver(T& over) : over_(over) {}
  Result<Json> Get(const ResourceType& type, std::string_view ns, std::string_view name) override {
    return over_.Get(type, ns, name);
  }
  Result<Json> List(const ResourceType& type, std::string_view ns) override {
    return over_.List(type, ns, {});
  }
  Result<Json> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                      const DeleteOptions& options) override {
    return over_.Delete(type, ns, name, options);
  }

 private:
  T& over_;
};

// pdb with the status DisruptionStatus computes from the pods of its namespace and their
// controllers' scales (a controller with a /scale whose uid matches the ownerReference), all
// read through access; the pods are read as they are now (a failed List: no pods).
Json BudgetWithStatus(ObjectAccess& access, Json pdb, Time now);

// The pods/eviction subresource: reads the pod (404 when missing) and its namespace's budgets
// (each with BudgetWithStatus), decides with CheckEviction (429 kEvictionRefusedMessage, ...),
// then deletes the pod with options (a graceful pod deletion). Two concurrent evictions could
// both spend a budget's last disruption: callers that can run concurrently serialize them
// (apiserver::Router holds a mutex, client::LocalClient another).
Status EvictPod(ObjectAccess& access, std::string_view ns, std::string_view name,
                const DeleteOptions& options);

}  // namespace pjemu::api
