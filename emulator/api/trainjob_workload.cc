// The TrainJob's row in the workload table (workload.h).
#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/trainjob.h"
#include "emulator/api/workload.h"

namespace pjemu::api::trainjob {
namespace {

// The last condition whose status is True (kubectl's State column shows the last condition's
// type, whatever its status); "" while it has none (running).
WorkloadState TrainJobState(const Json& tj) {
  WorkloadState s;
  for (const Json& c : ArrayOr(FieldAt(tj, {"status", "conditions"}))) {
    if (Str(c, "status") != "True") continue;
    s.state = Str(c, "type");
    s.reason = Str(c, "reason");
    s.message = Str(c, "message");
  }
  s.finished = IsFinished(tj);
  s.succeeded = api::TrueCondition(tj, kComplete) != nullptr;
  if (s.finished) {
    const Json* c = api::TrueCondition(tj, s.succeeded ? kComplete : kFailed);
    s.finished_at = ParseTime(Str(*c, "lastTransitionTime"));
  }
  return s;
}

// The SDK's selector: the pods of the JobSet named after the TrainJob.
std::string Pods(const Json& tj) {
  return std::string(jobset::kJobSetNameKey) + "=" + Str(Field(tj, "metadata"), "name");
}

std::string PrimaryPod(const Json& /*tj*/) { return ""; }

// The trainer as the TrainJob gives it (the runtime's container fills in the rest).
Json PrimaryContainer(const Json& tj) {
  const Json& trainer = FieldAt(tj, {"spec", "trainer"});
  if (!trainer.is_object()) return Json();
  Json c = {{"name", kNode}};
  for (const char* key : {"image", "command", "args", "env"}) {
    if (trainer.contains(key)) c[key] = trainer[key];
  }
  return c;
}

// A TrainJob holds no pod template of its own (the runtime's is checked when it is created).
std::vector<PodTemplateRef> Templates(const Json& /*tj*/) { return {}; }

Json Defaulted(Json tj) {
  SetDefaults(tj);
  return tj;
}

}  // namespace

extern const Workload kWorkload = {TrainJobState, Pods, PrimaryPod, PrimaryContainer, Templates,
                                   Defaulted,
                                   "trainer.kubeflow.org/trainjob", SpecSuspended, SetSpecSuspended};

}  // namespace pjemu::api::trainjob
