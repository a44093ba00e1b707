// The PyTorchJob's row in the workload table (workload.h).
#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/workload.h"

namespace pjemu::api {
namespace {

WorkloadState PyTorchJobState(const Json& job) {
  WorkloadState s;
  const Json* c = LastTrueCondition(job);
  if (c == nullptr) return s;
  s.state = Str(*c, "type");
  s.reason = Str(*c, "reason");
  s.message = Str(*c, "message");
  const Json* final = FinalCondition(job);
  s.finished = final != nullptr;
  s.succeeded = s.finished && Str(*final, "type") == kSucceeded;
  if (s.finished) {
    s.state = Str(*final, "type");
    s.reason = Str(*final, "reason");
    s.message = Str(*final, "message");
    const std::string done = Str(Field(job, "status"), "completionTime");
    s.finished_at = ParseTime(done.empty() ? Str(*final, "lastTransitionTime") : done);
  }
  return s;
}

std::string PyTorchJobPods(const Json& job) {
  return std::string(kJobNameLabel) + "=" + Str(Field(job, "metadata"), "name");
}

// The Master's pod, or worker 0's when the job has no Master (its rank 0).
std::string PyTorchJobPrimaryPod(const Json& job) {
  const std::string name = Str(Field(job, "metadata"), "name");
  return name + (HasMaster(SetDefaults(job)) ? "-master-0" : "-worker-0");
}

Json PyTorchJobPrimaryContainer(const Json& job) {
  const Json defaulted = SetDefaults(job);
  const std::string rtype = HasMaster(defaulted) ? kMaster : kWorker;
  const Json& containers =
      ArrayOr(FieldAt(ReplicaSpec(defaulted, rtype), {"template", "spec", "containers"}));
  for (const Json& c : containers) {
    if (Str(c, "name") == kDefaultContainerName) return c;
  }
  return containers.empty() ? Json() : containers[0];
}

std::vector<PodTemplateRef> PyTorchJobTemplates(const Json& job) {
  std::vector<PodTemplateRef> out;
  for (const std::string& rtype : ReplicaTypes(job)) {
    out.push_back({std::string("spec.pytorchReplicaSpecs.") + rtype,
                   "spec.pytorchReplicaSpecs[" + rtype + "].template",
                   FieldAt(ReplicaSpec(job, rtype), {"template", "spec"})});
  }
  return out;
}

}  // namespace

extern const Workload kPyTorchJobWorkload = {PyTorchJobState, PyTorchJobPods,
                                             PyTorchJobPrimaryPod, PyTorchJobPrimaryContainer,
                                             PyTorchJobTemplates, SetDefaults,
                                             "kubeflow.org/pytorchjob", IsSuspended,
                                             SetSuspended};

}  // namespace pjemu::api
