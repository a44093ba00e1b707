#include "emulator/api/disruption.h"

#include <algorithm>
#include <set>

#include "emulator/api/int_or_string.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/pod_status.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

using Type = FieldError::Type;

// ValidateNonnegativeIntOrPercent + IsValidPercent + the 100% cap, for spec.<key>.
void CheckIntOrPercent(const Json& spec, const char* key, std::vector<FieldError>* errs) {
  const Json& v = Field(spec, key);
  const std::string field = std::string("spec.") + key;
  if (v.is_null()) return;
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() < 0) {
      errs->push_back({Type::kInvalid, field, v.dump(), "must be greater than or equal to 0"});
    }
    return;
  }
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  const bool digits = text.size() > 1 && text.back() == '%' &&
                      text.find_first_not_of("0123456789") == text.size() - 1;
  if (!v.is_string() || !digits) {
    errs->push_back({Type::kInvalid, field, GoQuote(text),
                     "a valid percent string must be a numeric string followed by an ending "
                     "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"});
  } else if (std::stoll(text.substr(0, std::min<std::size_t>(text.size() - 1, 6))) > 100) {
    errs->push_back({Type::kInvalid, field, GoQuote(text), "must not be greater than 100%"});
  }
}

std::optional<IntOrString> IntOrPercent(const Json& spec, const char* key) {
  const Json& v = Field(spec, key);
  if (v.is_null()) return std::nullopt;
  auto parsed = IntOrString::FromJson(v);
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

// getExpectedScale: the sum of the scales of the selected pods' controllers, each once.
Result<std::int64_t> ExpectedScale(const std::vector<const Json*>& pods,
                                   const ControllerScale& scale) {
  std::set<std::string> seen;
  std::int64_t total = 0;
  for (const Json* pod : pods) {
    const Json* controller = nullptr;
    for (const Json& ref : ArrayOr(FieldAt(*pod, {"metadata", "ownerReferences"}))) {
      if (Field(ref, "controller").is_boolean() && ref["controller"].get<bool>()) controller = &ref;
    }
    const std::string name = Str(Field(*pod, "metadata"), "name");
    if (controller == nullptr) {
      return Status(Code::kInternal, "found no controller ref for pod \"" + name + "\"");
    }
    std::optional<std::int64_t> replicas = scale ? scale(*pod, *controller) : std::nullopt;
    if (!replicas) return Status(Code::kInternal, "found no controllers for pod \"" + name + "\"");
    if (seen.insert(Str(*controller, "uid")).second) total += *replicas;
  }
  return total;
}

struct Health {
  std::int64_t expected = 0;
  std::int64_t desired = 0;
};

// getExpectedPodCount: (expectedCount, desiredHealthy) for the budget's spec.
Result<Health> ExpectedHealth(const Json& spec, const std::vector<const Json*>& pods,
                              const ControllerScale& scale) {
  Health h;
  auto max_unavailable = IntOrPercent(spec, "maxUnavailable");
  auto min_available = IntOrPercent(spec, "minAvailable");
  if (max_unavailable) {
    ASSIGN_OR_RETURN(h.expected, ExpectedScale(pods, scale));
    ASSIGN_OR_RETURN(int unavailable, ScaledValueFromIntOrPercent(
                                          *max_unavailable, static_cast<int>(h.expected), true));
    h.desired = std::max<std::int64_t>(0, h.expected - unavailable);
  } else if (min_available && min_available->type() == IntOrString::Type::kInt) {
    h.desired = min_available->int_value();
    h.expected = static_cast<std::int64_t>(pods.size());
  } else if (min_available) {
    ASSIGN_OR_RETURN(h.expected, ExpectedScale(pods, scale));
    ASSIGN_OR_RETURN(int desired, ScaledValueFromIntOrPercent(*min_available,
                                                              static_cast<int>(h.expected), true));
    h.desired = desired;
  }
  return h;
}

Json Condition(const Json& old_status, const std::string& status, const std::string& reason,
               const std::string& message, const Json& generation, Time now) {
  std::string since = FormatTime(now);
  for (const Json& c : ArrayOr(Field(old_status, "conditions"))) {
    if (Str(c, "type") == "DisruptionAllowed" && Str(c, "status") == status &&
        !Str(c, "lastTransitionTime").empty()) {
      since = Str(c, "lastTransitionTime");
    }
  }
  return {{"type", "DisruptionAllowed"},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"observedGeneration", generation},
          {"lastTransitionTime", since}};
}

// The budget of `budgets` (status computed) that selects `pod` the way eviction.go looks it up.
Result<const Json*> BudgetOf(const Json& pod, const std::vector<Json>& budgets) {
  const Json* found = nullptr;
  for (const Json& pdb : budgets) {
    if (Str(Field(pdb, "metadata"), "namespace") != Str(Field(pod, "metadata"), "namespace")) {
      continue;
    }
    const Json& selector = FieldAt(pdb, {"spec", "selector"});
    if (selector.is_null()) continue;
    auto parsed = LabelSelector::FromObject(selector, "spec.selector");
    // A nil or empty selector matches nothing here, not everything (eviction.go).
    if (!parsed.ok() || parsed->Empty() || !parsed->Matches(pod)) continue;
    if (found != nullptr) {
      return Status(Code::kInternal,
                    "Internal error occurred: This pod has more than one PodDisruptionBudget, "
                    "which the eviction subresource does not support.");
    }
    found = &pdb;
  }
  return found;
}

}  // namespace

Status ValidatePodDisruptionBudget(const Json& pdb, const Json* /*old*/,
                                   std::vector<std::string>* /*warnings*/) {
  std::vector<FieldError> errs;
  const Json& spec = Field(pdb, "spec");
  CheckIntOrPercent(spec, "minAvailable", &errs);
  CheckIntOrPercent(spec, "maxUnavailable", &errs);
  if (!Field(spec, "minAvailable").is_null() && !Field(spec, "maxUnavailable").is_null()) {
    errs.push_back({Type::kInvalid, "spec", spec.dump(),
                    "minAvailable and maxUnavailable cannot be both set"});
  }
  const Json& selector = Field(spec, "selector");
  if (!selector.is_null()) {
    auto parsed = LabelSelector::FromObject(selector, "spec.selector");
    if (!parsed.ok()) {
      errs.push_back({Type::kInvalid, "spec.selector", selector.dump(), parsed.status().message()});
    }
  }
  const Json& policy = Field(spec, "unhealthyPodEvictionPolicy");
  if (!policy.is_null()) {
    std::string value = policy.is_string() ? policy.get<std::string>() : policy.dump();
    if (value != "IfHealthyBudget" && value != "AlwaysAllow") {
      errs.push_back(NotSupportedError("spec.unhealthyPodEvictionPolicy", value,
                                       {"AlwaysAllow", "IfHealthyBudget"}));
    }
  }
  return InvalidObject(PodDisruptionBudgets(), pdb, errs);
}

std::vector<const Json*> PodsOfBudget(const Json& pdb, const std::vector<Json>& pods) {
  std::vector<const Json*> out;
  const Json& selector = FieldAt(pdb, {"spec", "selector"});
  if (selector.is_null()) return out;
  auto parsed = LabelSelector::FromObject(selector, "spec.selector");
  if (!parsed.ok()) return out;
  const std::string ns = Str(Field(pdb, "metadata"), "namespace");
  for (const Json& pod : pods) {
    if (Str(Field(pod, "metadata"), "namespace") == ns && parsed->Matches(pod)) {
      out.push_back(&pod);
    }
  }
  return out;
}

Json DisruptionStatus(const Json& pdb, const std::vector<Json>& pods, const ControllerScale& scale,
                      Time now) {
  const Json& old = Field(pdb, "status");
  const Json generation = FieldAt(pdb, {"metadata", "generation"}).is_number_integer()
                              ? FieldAt(pdb, {"metadata", "generation"})
                              : Json(1);
  std::vector<const Json*> selected = PodsOfBudget(pdb, pods);
  std::int64_t healthy = 0;
  for (const Json* pod : selected) {
    if (FieldAt(*pod, {"metadata", "deletionTimestamp"}).is_null() && PodReady(*pod)) ++healthy;
  }
  Json status = {{"observedGeneration", generation},
                 {"disruptionsAllowed", 0},
                 {"currentHealthy", healthy},
                 {"desiredHealthy", 0},
                 {"expectedPods", 0}};
  if (Field(old, "disruptedPods").is_object()) status["disruptedPods"] = old["disruptedPods"];
  auto health = ExpectedHealth(Field(pdb, "spec"), selected, scale);
  if (!health.ok()) {
    status["conditions"] = Json::array(
        {Condition(old, "False", "SyncFailed", health.status().message(), generation, now)});
    return status;
  }
  std::int64_t allowed = healthy - health->desired;
  if (health->expected <= 0 || allowed <= 0) allowed = 0;
  status["disruptionsAllowed"] = allowed;
  status["desiredHealthy"] = health->desired;
  status["expectedPods"] = health->expected;
  status["conditions"] =
      Json::array({allowed > 0 ? Condition(old, "True", "SufficientPods", "", generation, now)
                               : Condition(old, "False", "InsufficientPods", "", generation, now)});
  return status;
}

Status CheckEviction(const Json& pod, const std::vector<Json>& budgets) {
  const std::string phase = PodPhase(pod);
  if (phase == "Succeeded" || phase == "Failed" || phase == "Pending" || Deleting(pod)) {
    return Status::Ok();  // canIgnorePDB
  }
  ASSIGN_OR_RETURN(const Json* pdb, BudgetOf(pod, budgets));
  if (pdb == nullptr) return Status::Ok();
  const Json& status = Field(*pdb, "status");
  const std::int64_t current = OptInt(status, "currentHealthy").value_or(0);
  const std::int64_t desired = OptInt(status, "desiredHealthy").value_or(0);
  const std::int64_t allowed = OptInt(status, "disruptionsAllowed").value_or(0);
  if (!PodReady(pod)) {
    if (Str(Field(*pdb, "spec"), "unhealthyPodEvictionPolicy") == "AlwaysAllow") {
      return Status::Ok();
    }
    if (current >= desired && desired > 0) return Status::Ok();  // IfHealthyBudget
  }
  if (allowed < 0) return Status(Code::kForbidden, "pdb disruptions allowed is negative");
  if (allowed > 0) return Status::Ok();
  const std::string name = Str(Field(*pdb, "metadata"), "name");
  Json cause = {{"reason", kDisruptionBudgetCause},
                {"message", "The disruption budget " + name + " needs " + std::to_string(desired) +
                                " healthy pods and has " + std::to_string(current) + " currently"}};
  return Status(Code::kTooManyRequests, kEvictionRefusedMessage,
                Json{{"causes", Json::array({cause})}});
}

std::int64_t ScaleSpecReplicas(const ResourceType& type, const Json& object) {
  const Json& replicas = JsonPathValue(object, type.scale->spec_replicas);
  return replicas.is_number_integer() ? replicas.get<std::int64_t>() : 0;
}

Json BudgetWithStatus(ObjectAccess& access, Json pdb, Time now) {
  const std::string ns = Str(Field(pdb, "metadata"), "namespace");
  auto pods = access.List(Pods(), ns);
  std::vector<Json> items;
  if (pods.ok()) {
    for (const Json& pod : ArrayOr(Field(*pods, "items"))) items.push_back(pod);
  }
  // The controller's Scale, as the disruption controller reads it through the scale client.
  ControllerScale scale = [&access](const Json& pod,
                                    const Json& ref) -> std::optional<std::int64_t> {
    const ResourceType* type = FindByKind(Str(ref, "apiVersion"), Str(ref, "kind"));
    if (type == nullptr || type->scale == nullptr) return std::nullopt;
    auto owner = access.Get(*type, Str(Field(pod, "metadata"), "namespace"), Str(ref, "name"));
    if (!owner.ok() || Str(Field(*owner, "metadata"), "uid") != Str(ref, "uid")) {
      return std::nullopt;
    }
    return ScaleSpecReplicas(*type, *owner);
  };
  pdb["status"] = DisruptionStatus(pdb, items, scale, now);
  return pdb;
}

Status EvictPod(ObjectAccess& access, std::string_view ns, std::string_view name,
                const DeleteOptions& options) {
  ASSIGN_OR_RETURN(Json pod, access.Get(Pods(), ns, name));
  ASSIGN_OR_RETURN(Json listed, access.List(PodDisruptionBudgets(), ns));
  std::vector<Json> budgets;
  // The decision reads no condition times: any instant gives the same answer.
  for (const Json& pdb : ArrayOr(Field(listed, "items"))) {
    budgets.push_back(BudgetWithStatus(access, pdb, Time{}));
  }
  RETURN_IF_ERROR(CheckEviction(pod, budgets));
  return access.Delete(Pods(), ns, name, options).status();
}

}  // namespace pjemu::api
