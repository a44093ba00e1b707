// The batch/v1 Job's row in the workload table (workload.h).
#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/workload.h"

namespace pjemu::api::batchjob {
namespace {

// kubectl's STATUS cell (printJob): the first that holds, in this order.
WorkloadState JobState(const Json& job) {
  static const char* const kOrder[] = {kComplete, kFailed, kSuspended, kFailureTarget,
                                       kSuccessCriteriaMet};
  WorkloadState s;
  s.state = Field(job, "status").is_object() ? "Running" : "";
  for (const char* type : kOrder) {
    const Json* c = TrueCondition(job, type);
    if (!c) continue;
    s.state = type;
    s.reason = Str(*c, "reason");
    s.message = Str(*c, "message");
    break;
  }
  s.finished = IsFinished(job);
  s.succeeded = TrueCondition(job, kComplete) != nullptr;
  if (s.succeeded) s.finished_at = ParseTime(Str(Field(job, "status"), "completionTime"));
  if (const Json* failed = TrueCondition(job, kFailed)) {
    s.finished_at = ParseTime(Str(*failed, "lastTransitionTime"));
  }
  return s;
}

std::string Pods(const Json& job) {
  return std::string(kJobNameLabel) + "=" + Str(Field(job, "metadata"), "name");
}

// A Job's pods have generated names: none is known before it exists.
std::string PrimaryPod(const Json& /*job*/) { return ""; }

Json PrimaryContainer(const Json& job) {
  const Json& containers = ArrayOr(FieldAt(job, {"spec", "template", "spec", "containers"}));
  return containers.empty() ? Json() : containers[0];
}

std::vector<PodTemplateRef> Templates(const Json& job) {
  return {{"spec", "spec.template", FieldAt(job, {"spec", "template", "spec"})}};
}

// Jobs are defaulted by the API server: a stored Job is its controller's view already.
Json Defaulted(Json job) {
  if (!Str(Field(job, "metadata"), "uid").empty()) SetDefaults(job);
  return job;
}

}  // namespace

extern const Workload kWorkload = {JobState, Pods, PrimaryPod, PrimaryContainer, Templates,
                                   Defaulted,
                                   "batch/job", SpecSuspended, SetSpecSuspended};

}  // namespace pjemu::api::batchjob
