// kueue.x-k8s.io/v1beta1, still served beside the stored v1beta2 (deprecated), converted as
// Kueue's conversion webhook converts: ClusterQueue `cohort` <-> `cohortName`, admissionChecks
// names <-> admissionChecksStrategy, fungibility `Borrow`/`Preempt` <-> `MayStopSearch`;
// LocalQueue status `flavorUsage` <-> `flavorsUsage`; Workload `priorityClassName` and
// `priorityClassSource` <-> `priorityClassRef`, and the v1beta1 status field's misspelling.
// Fields one version has and the other lacks are dropped going across.
#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"

namespace pjemu::api::kueue {
namespace {

constexpr char kV1beta1[] = "kueue.x-k8s.io/v1beta1";
constexpr char kWpcSource[] = "kueue.x-k8s.io/workloadpriorityclass";
constexpr char kPriorityClassSource[] = "scheduling.k8s.io/priorityclass";

// Moves obj[from] to obj[to] (nothing when absent).
void Rename(Json& obj, const char* from, const char* to) {
  if (!obj.is_object() || !obj.contains(from)) return;
  obj[to] = std::move(obj[from]);
  obj.erase(from);
}

Json* Child(Json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_object() ? &obj[key] : nullptr;
}

void ClusterQueueUp(Json& cq) {
  Json* spec = Child(cq, "spec");
  if (spec == nullptr) return;
  Rename(*spec, "cohort", "cohortName");
  if (spec->contains("admissionChecks")) {
    Json checks = Json::array();
    for (const Json& name : ArrayOr((*spec)["admissionChecks"])) checks.push_back({{"name", name}});
    (*spec)["admissionChecksStrategy"]["admissionChecks"] = checks;
    spec->erase("admissionChecks");
  }
  if (Json* f = Child(*spec, "flavorFungibility")) {
    for (const char* key : {"whenCanBorrow", "whenCanPreempt"}) {
      if (Str(*f, key) == "Borrow" || Str(*f, key) == "Preempt") (*f)[key] = "MayStopSearch";
    }
  }
  if (Json* status = Child(cq, "status")) status->erase("pendingWorkloadsStatus");
}

void ClusterQueueDown(Json& cq) {
  Json* spec = Child(cq, "spec");
  if (spec == nullptr) return;
  Rename(*spec, "cohortName", "cohort");
  if (Json* strategy = Child(*spec, "admissionChecksStrategy")) {
    Json names = Json::array();
    for (const Json& c : ArrayOr(Field(*strategy, "admissionChecks")))
      names.push_back(Str(c, "name"));
    (*spec)["admissionChecks"] = names;
    spec->erase("admissionChecksStrategy");
  }
  if (Json* f = Child(*spec, "flavorFungibility")) {
    if (Str(*f, "whenCanBorrow") == "MayStopSearch") (*f)["whenCanBorrow"] = "Borrow";
  }
}

void LocalQueueUp(Json& lq) {
  if (Json* status = Child(lq, "status")) {
    Rename(*status, "flavorUsage", "flavorsUsage");
    status->erase("flavors");
  }
}

void LocalQueueDown(Json& lq) {
  if (Json* status = Child(lq, "status")) Rename(*status, "flavorsUsage", "flavorUsage");
}

void WorkloadUp(Json& wl) {
  if (Json* spec = Child(wl, "spec"); spec && spec->contains("priorityClassName")) {
    const bool wpc = Str(*spec, "priorityClassSource") != kPriorityClassSource;
    (*spec)["priorityClassRef"] = {{"group", wpc ? kGroup : "scheduling.k8s.io"},
                                   {"kind", wpc ? "WorkloadPriorityClass" : "PriorityClass"},
                                   {"name", (*spec)["priorityClassName"]}};
    spec->erase("priorityClassName");
    spec->erase("priorityClassSource");
  }
  if (Json* status = Child(wl, "status")) {
    Rename(*status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds");
  }
}

void WorkloadDown(Json& wl) {
  if (Json* spec = Child(wl, "spec"); spec && spec->contains("priorityClassRef")) {
    const Json ref = (*spec)["priorityClassRef"];
    (*spec)["priorityClassName"] = Str(ref, "name");
    (*spec)["priorityClassSource"] =
        Str(ref, "kind") == "PriorityClass" ? kPriorityClassSource : kWpcSource;
    spec->erase("priorityClassRef");
  }
  if (Json* status = Child(wl, "status")) {
    Rename(*status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds");
  }
}

// Each kind's converters (ResourceFlavor and WorkloadPriorityClass: the same schema).
struct KindConversion {
  const char* kind;
  void (*up)(Json&);
  void (*down)(Json&);
};
constexpr KindConversion kConversions[] = {
    {"ClusterQueue", ClusterQueueUp, ClusterQueueDown},
    {"LocalQueue", LocalQueueUp, LocalQueueDown},
    {"Workload", WorkloadUp, WorkloadDown},
};

void Convert(Json& object, const char* api_version, bool up) {
  if (!object.is_object()) return;
  for (const KindConversion& c : kConversions) {
    if (Str(object, "kind") == c.kind) (up ? c.up : c.down)(object);
  }
  if (object.contains("apiVersion")) object["apiVersion"] = api_version;
}

}  // namespace

void V1beta1ToStored(Json& object) { Convert(object, kApiVersion, true); }
void V1beta1FromStored(Json& object) { Convert(object, kV1beta1, false); }

const ServedVersion& V1beta1() {
  static const ServedVersion kVersion = {"v1beta1",
                                         "This version is deprecated. Use v1beta2 instead.",
                                         V1beta1ToStored, V1beta1FromStored};
  return kVersion;
}

}  // namespace pjemu::api::kueue
