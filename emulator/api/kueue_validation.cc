// Kueue's objects' defaulting (their CRDs' defaults) and refusals: the CRD schema and CEL rules
// answer 422 (`ClusterQueue.kueue.x-k8s.io "x" is invalid: ...`), Kueue's validating webhooks
// 403 (`admission webhook "vclusterqueue.kb.io" denied the request: ...`).
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/api/selector.h"

namespace pjemu::api::kueue {
namespace {

using Type = FieldError::Type;

std::string At(const std::string& base, std::size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

void Default(Json& obj, const char* key, Json value) {
  if (!obj.is_object()) obj = Json::object();
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = std::move(value);
}

// A quantity field: its errors (422 for one that does not parse) and its value.
std::optional<Quantity> QuantityAt(const Json& v, const std::string& field,
                                   std::vector<FieldError>& errs) {
  if (v.is_null()) return std::nullopt;
  auto q = Quantity::FromJson(v);
  if (!q.ok()) {
    errs.push_back({Type::kInvalid, field, ValueText(v), std::string(q.status().message())});
    return std::nullopt;
  }
  return *q;
}

// The CRD's schema: enums and required fields of a ClusterQueue.
std::vector<FieldError> ClusterQueueSchemaErrors(const Json& cq) {
  std::vector<FieldError> errs;
  const Json& spec = Field(cq, "spec");
  CheckSupported(Field(spec, "queueingStrategy"), "spec.queueingStrategy",
                 {"StrictFIFO", "BestEffortFIFO"}, &errs);
  CheckSupported(Field(spec, "stopPolicy"), "spec.stopPolicy", {"None", "Hold", "HoldAndDrain"},
                 &errs);
  const Json& preemption = Field(spec, "preemption");
  CheckSupported(Field(preemption, "withinClusterQueue"), "spec.preemption.withinClusterQueue",
                 {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}, &errs);
  CheckSupported(Field(preemption, "reclaimWithinCohort"), "spec.preemption.reclaimWithinCohort",
                 {"Never", "LowerPriority", "Any"}, &errs);
  const Json& groups = Field(spec, "resourceGroups");
  if (!groups.is_null() && !groups.is_array()) {
    errs.push_back({Type::kInvalid, "spec.resourceGroups", ValueText(groups), "must be a list"});
  } else if (groups.size() > 16) {
    errs.push_back({Type::kTooMany, "spec.resourceGroups", std::to_string(groups.size()),
                    "must have at most 16 items"});
  }
  const bool cohort = !Str(spec, "cohortName").empty();
  for (std::size_t g = 0; g < ArrayOr(groups).size(); ++g) {
    const std::string gf = At("spec.resourceGroups", g);
    for (std::size_t f = 0; f < ArrayOr(Field(groups[g], "flavors")).size(); ++f) {
      const Json& flavor = groups[g]["flavors"][f];
      const std::string ff = At(gf + ".flavors", f);
      if (Str(flavor, "name").empty()) {
        errs.push_back({Type::kRequired, ff + ".name", "", "Required value"});
      }
      const Json& resources = ArrayOr(Field(flavor, "resources"));
      for (std::size_t r = 0; r < resources.size(); ++r) {
        if (!cohort && !Field(resources[r], "borrowingLimit").is_null()) {
          errs.push_back({Type::kInvalid, At(ff + ".resources", r), "",
                          "borrowingLimit must be nil when cohort is empty"});
        }
      }
    }
  }
  return errs;
}

// Kueue's vclusterqueue.kb.io webhook.
std::vector<FieldError> ClusterQueueWebhookErrors(const Json& cq) {
  std::vector<FieldError> errs;
  const Json& spec = Field(cq, "spec");
  const bool cohort = !Str(spec, "cohortName").empty();
  const Json& preemption = Field(spec, "preemption");
  if (Str(preemption, "reclaimWithinCohort") == "Never" &&
      Str(FieldAt(preemption, {"borrowWithinCohort"}), "policy") != "" &&
      Str(FieldAt(preemption, {"borrowWithinCohort"}), "policy") != "Never") {
    errs.push_back({Type::kInvalid, "spec.preemption", "",
                    "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"});
  }
  std::set<std::string> flavors_seen, resources_seen;
  const Json& groups = ArrayOr(Field(spec, "resourceGroups"));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string gf = At("spec.resourceGroups", g);
    const Json& covered = ArrayOr(Field(groups[g], "coveredResources"));
    for (std::size_t c = 0; c < covered.size(); ++c) {
      std::string name = covered[c].is_string() ? covered[c].get<std::string>() : "";
      if (!resources_seen.insert(name).second) {
        errs.push_back({Type::kDuplicate, At(gf + ".coveredResources", c), GoQuote(name), ""});
      }
    }
    const Json& flavors = ArrayOr(Field(groups[g], "flavors"));
    for (std::size_t f = 0; f < flavors.size(); ++f) {
      const std::string ff = At(gf + ".flavors", f);
      const std::string fname = Str(flavors[f], "name");
      if (!flavors_seen.insert(fname).second) {
        errs.push_back({Type::kDuplicate, ff + ".name", GoQuote(fname), ""});
      }
      const Json& resources = ArrayOr(Field(flavors[f], "resources"));
      if (resources.size() != covered.size()) {
        errs.push_back({Type::kInvalid, ff + ".resources", std::to_string(resources.size()),
                        "must have the same number of resources as the coveredResources"});
      }
      for (std::size_t r = 0; r < resources.size(); ++r) {
        const std::string rf = At(ff + ".resources", r);
        const std::string rname = Str(resources[r], "name");
        if (r < covered.size() && covered[r] != rname) {
          errs.push_back({Type::kInvalid, rf + ".name", GoQuote(rname),
                          "must match the name in coveredResources"});
        }
        auto nominal = QuantityAt(Field(resources[r], "nominalQuota"), rf + ".nominalQuota", errs);
        if (nominal && nominal->Sign() < 0) {
          errs.push_back({Type::kInvalid, rf + ".nominalQuota", GoQuote(nominal->String()),
                          "must be greater than or equal to 0"});
        }
        auto borrow = QuantityAt(Field(resources[r], "borrowingLimit"), rf + ".borrowingLimit", errs);
        if (borrow && borrow->Sign() < 0) {
          errs.push_back({Type::kInvalid, rf + ".borrowingLimit", GoQuote(borrow->String()),
                          "must be greater than or equal to 0"});
        }
        auto lend = QuantityAt(Field(resources[r], "lendingLimit"), rf + ".lendingLimit", errs);
        if (lend && !cohort) {
          errs.push_back({Type::kInvalid, rf + ".lendingLimit", GoQuote(lend->String()),
                          "must be nil when cohort is empty"});
        } else if (lend && nominal && lend->Cmp(*nominal) > 0) {
          errs.push_back({Type::kInvalid, rf + ".lendingLimit", GoQuote(lend->String()),
                          "must be less than or equal to the nominalQuota"});
        }
      }
    }
  }
  return errs;
}

}  // namespace

void DefaultClusterQueue(Json& cq) {
  Json& spec = cq["spec"];
  Default(spec, "queueingStrategy", "BestEffortFIFO");
  Default(spec, "stopPolicy", "None");
  Default(spec, "flavorFungibility", Json::object());
  Default(spec["flavorFungibility"], "whenCanBorrow", "MayStopSearch");
  Default(spec["flavorFungibility"], "whenCanPreempt", "TryNextFlavor");
  Default(spec, "preemption", Json::object());
  Default(spec["preemption"], "reclaimWithinCohort", "Never");
  Default(spec["preemption"], "withinClusterQueue", "Never");
  Default(spec["preemption"], "borrowWithinCohort", Json::object());
  Default(spec["preemption"]["borrowWithinCohort"], "policy", "Never");
}

Status ValidateClusterQueue(const Json& cq, const Json*, std::vector<std::string>*) {
  RETURN_IF_ERROR(InvalidObject(ClusterQueues(), cq, ClusterQueueSchemaErrors(cq)));
  return WebhookDenied(ClusterQueues(), "vclusterqueue.kb.io", cq, ClusterQueueWebhookErrors(cq));
}

void DefaultLocalQueue(Json& lq) { Default(lq["spec"], "stopPolicy", "None"); }

Status ValidateLocalQueue(const Json& lq, const Json* old, std::vector<std::string>*) {
  std::vector<FieldError> errs;
  const Json& cq = FieldAt(lq, {"spec", "clusterQueue"});
  if (!cq.is_string() || cq.get<std::string>().empty()) {
    errs.push_back({Type::kRequired, "spec.clusterQueue", "", "Required value"});
  } else if (old != nullptr && FieldAt(*old, {"spec", "clusterQueue"}) != cq) {
    errs.push_back({Type::kInvalid, "spec.clusterQueue", GoQuote(cq.get<std::string>()),
                    "field is immutable"});
  }
  CheckSupported(FieldAt(lq, {"spec", "stopPolicy"}), "spec.stopPolicy",
                 {"None", "Hold", "HoldAndDrain"}, &errs);
  return InvalidObject(LocalQueues(), lq, errs);
}

void DefaultWorkload(Json& wl) {
  Json& spec = wl["spec"];
  Default(spec, "active", true);
  if (!spec["podSets"].is_array()) return;
  for (Json& set : spec["podSets"]) {
    Default(set, "name", "main");
    Default(set, "count", 1);
  }
}

Status ValidateWorkload(const Json& wl, const Json* old, std::vector<std::string>*) {
  std::vector<FieldError> errs;
  const Json& sets = FieldAt(wl, {"spec", "podSets"});
  if (!sets.is_array() || sets.empty()) {
    errs.push_back({Type::kRequired, "spec.podSets", "", "Required value"});
  } else if (sets.size() > 18) {
    errs.push_back({Type::kTooMany, "spec.podSets", std::to_string(sets.size()),
                    "must have at most 18 items"});
  }
  int min_counts = 0;
  for (std::size_t i = 0; i < ArrayOr(sets).size(); ++i) {
    const std::string f = At("spec.podSets", i);
    for (const std::string& p : ValidateDns1123Label(Str(sets[i], "name"))) {
      errs.push_back({Type::kInvalid, f + ".name", GoQuote(Str(sets[i], "name")), p});
    }
    if (OptInt(sets[i], "count").value_or(1) < 0) {
      errs.push_back({Type::kInvalid, f + ".count", Field(sets[i], "count").dump(),
                      "should be greater than or equal to 0"});
    }
    if (!Field(sets[i], "minCount").is_null()) ++min_counts;
  }
  if (min_counts > 1) {
    errs.push_back({Type::kInvalid, "spec.podSets", "", "at most one podSet can use minCount"});
  }
  if (old != nullptr && IsTrue(*old, kQuotaReserved) &&
      Str(Field(wl, "spec"), "queueName") != Str(Field(*old, "spec"), "queueName")) {
    errs.push_back({Type::kInvalid, "spec", "", "queueName is immutable while workload quota reserved"});
  }
  return InvalidObject(Workloads(), wl, errs);
}

Status ValidateResourceFlavor(const Json& rf, const Json*, std::vector<std::string>*) {
  std::vector<FieldError> errs;
  const Json& spec = Field(rf, "spec");
  for (const char* key : {"nodeLabels", "nodeTaints", "tolerations"}) {
    const Json& v = Field(spec, key);
    if (v.size() > 8 && (v.is_array() || v.is_object())) {
      errs.push_back({Type::kTooMany, std::string("spec.") + key, std::to_string(v.size()),
                      "must have at most 8 items"});
    }
  }
  for (const auto& [key, value] : ObjectOr(Field(spec, "nodeLabels")).items()) {
    for (const std::string& p : ValidateQualifiedName(key)) {
      errs.push_back({Type::kInvalid, "spec.nodeLabels", GoQuote(key), p});
    }
    for (const std::string& p : ValidateLabelValue(value.is_string() ? value.get<std::string>() : "")) {
      errs.push_back({Type::kInvalid, "spec.nodeLabels[" + key + "]", ValueText(value), p});
    }
  }
  const Json& taints = ArrayOr(Field(spec, "nodeTaints"));
  for (std::size_t i = 0; i < taints.size(); ++i) {
    CheckSupported(Field(taints[i], "effect"), At("spec.nodeTaints", i) + ".effect",
                   {"NoSchedule", "PreferNoSchedule", "NoExecute"}, &errs);
  }
  return InvalidObject(ResourceFlavors(), rf, errs);
}

Status ValidateWorkloadPriorityClass(const Json& wpc, const Json*, std::vector<std::string>*) {
  std::vector<FieldError> errs;
  const Json& value = Field(wpc, "value");
  if (!value.is_number_integer()) {
    errs.push_back({Type::kRequired, "value", "", "Required value"});
  }
  if (Str(wpc, "description").size() > 2048) {
    errs.push_back({Type::kTooLong, "description", "", "may not be more than 2048 bytes"});
  }
  return InvalidObject(WorkloadPriorityClasses(), wpc, errs);
}

}  // namespace pjemu::api::kueue
