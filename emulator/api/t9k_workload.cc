// The PyTorchTrainingJob's row in the workload table (workload.h).
#include "emulator/api/json_fields.h"
#include "emulator/api/t9k.h"
#include "emulator/api/workload.h"

namespace pjemu::api::t9k {
namespace {

// The condition that explains each phase.
const Json* ConditionBehind(const Json& job, const std::string& phase) {
  static const std::pair<const char*, const char*> kBehind[] = {
      {kSucceeded, kCompleted}, {kFailed, kCondFailed},   {kRunning, kCondRunning},
      {kPaused, kCondPaused},   {kPending, kInitialized}, {kResuming, kCondPaused}};
  for (const auto& [p, type] : kBehind) {
    if (phase != p) continue;
    for (const Json& c : ArrayOr(FieldAt(job, {"status", "conditions"}))) {
      if (Str(c, "type") == type) return &c;
    }
  }
  return nullptr;
}

WorkloadState JobState(const Json& job) {
  WorkloadState s;
  s.state = Phase(job);
  s.finished = s.state == kSucceeded || s.state == kFailed;
  s.succeeded = s.state == kSucceeded;
  if (const Json* c = ConditionBehind(job, s.state)) {
    s.reason = Str(*c, "reason");
    s.message = Str(*c, "message");
    if (s.finished) s.finished_at = ParseTime(Str(*c, "lastTransitionTime"));
  }
  return s;
}

std::string Pods(const Json& job) {
  return std::string(kOwnerNameLabel) + "=" + Str(Field(job, "metadata"), "name");
}

// The master: the first replica of the first replica spec.
std::string PrimaryPod(const Json& job) {
  const Json& specs = ReplicaSpecs(job);
  if (specs.empty()) return "";
  return Str(Field(job, "metadata"), "name") + "-" + NameSuffix(job) + "-" + TypeName(specs[0]) +
         "-0";
}

Json PrimaryContainer(const Json& job) {
  const Json& specs = ReplicaSpecs(job);
  if (specs.empty()) return Json();
  const Json& containers = ArrayOr(FieldAt(specs[0], {"template", "spec", "containers"}));
  return containers.empty() ? Json() : containers[0];
}

std::vector<PodTemplateRef> Templates(const Json& job) {
  std::vector<PodTemplateRef> out;
  const Json& specs = ReplicaSpecs(job);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string name = "spec.replicaSpecs[" + std::to_string(i) + "]";
    out.push_back({name, name + ".template", FieldAt(specs[i], {"template", "spec"})});
  }
  return out;
}

}  // namespace

extern const Workload kWorkload = {JobState, Pods, PrimaryPod, PrimaryContainer, Templates,
                                   SetDefaults};

}  // namespace pjemu::api::t9k
