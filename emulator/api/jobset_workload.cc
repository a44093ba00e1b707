// The JobSet's row in the workload table (workload.h).
#include "emulator/api/json_fields.h"
#include "emulator/api/jobset.h"
#include "emulator/api/workload.h"

namespace pjemu::api::jobset {
namespace {

// status.terminalState once finished, else Suspended while suspended, else Running once the
// controller wrote a status.
WorkloadState JobSetState(const Json& js) {
  WorkloadState s;
  const Json& status = Field(js, "status");
  s.state = status.is_object() ? "Running" : "";
  for (const char* type : {kCompleted, kFailed, kSuspended}) {
    const Json* c = api::TrueCondition(js, type);
    if (!c) continue;
    s.state = type;
    s.reason = Str(*c, "reason");
    s.message = Str(*c, "message");
    if (type != std::string(kSuspended)) s.finished_at = ParseTime(Str(*c, "lastTransitionTime"));
    break;
  }
  s.finished = IsFinished(js);
  s.succeeded = api::TrueCondition(js, kCompleted) != nullptr;
  return s;
}

std::string Pods(const Json& js) {
  return std::string(kJobSetNameKey) + "=" + Str(Field(js, "metadata"), "name");
}

// Pods of Jobs have generated names: none is known before it exists.
std::string PrimaryPod(const Json& /*js*/) { return ""; }

Json PrimaryContainer(const Json& js) {
  const Json& rjobs = ArrayOr(FieldAt(js, {"spec", "replicatedJobs"}));
  if (rjobs.empty()) return Json();
  const Json& containers =
      ArrayOr(FieldAt(rjobs[0], {"template", "spec", "template", "spec", "containers"}));
  return containers.empty() ? Json() : containers[0];
}

std::vector<PodTemplateRef> Templates(const Json& js) {
  std::vector<PodTemplateRef> out;
  const Json& rjobs = ArrayOr(FieldAt(js, {"spec", "replicatedJobs"}));
  for (std::size_t i = 0; i < rjobs.size(); ++i) {
    const std::string name = "spec.replicatedJobs[" + std::to_string(i) + "].template.spec";
    out.push_back({name, name + ".template",
                   FieldAt(rjobs[i], {"template", "spec", "template", "spec"})});
  }
  return out;
}

// JobSets are defaulted by their webhook: a stored JobSet is its controller's view already.
Json Defaulted(Json js) {
  SetDefaults(js);
  return js;
}

}  // namespace

extern const Workload kWorkload = {JobSetState, Pods, PrimaryPod, PrimaryContainer, Templates,
                                   Defaulted,
                                   "jobset.x-k8s.io/jobset", SpecSuspended, SetSpecSuspended};

}  // namespace pjemu::api::jobset
