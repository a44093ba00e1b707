// What the CLI, the console, the scenario runner and the fault injector read of a job kind,
// whatever its status looks like: one small table of functions per kind, hung on the kind's row
// of the resource table (ResourceType::workload). Each kind fills it in its own files
// (pytorchjob.cc, t9k.cc); nothing outside them asks which kind a job is.
// Thread safety: immutable tables of pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// A job's state as one word with its reason, in the kind's own vocabulary.
struct WorkloadState {
  // What `kubectl get` shows for it: a PyTorchJob's last condition type ("Running",
  // "Succeeded"), a PyTorchTrainingJob's phase; "" before the controller wrote any status.
  std::string state;
  std::string reason;   // of the condition behind `state` ("" when none)
  std::string message;  // likewise
  bool finished = false;   // the controller will not run it again
  bool succeeded = false;  // finished and succeeded
  std::optional<Time> finished_at;  // when it finished, where the status says
};

// One pod template of a job: `name` as messages cite it ("spec.pytorchReplicaSpecs.Master",
// "spec.replicaSpecs[0]"), `field` the JSON path of its template as error details name it
// ("spec.pytorchReplicaSpecs[Master].template"), and the template's pod spec.
struct PodTemplateRef {
  std::string name;
  std::string field;
  Json spec;
};

struct Workload {
  WorkloadState (*state)(const Json& job);
  // The label selector that lists the job's pods ("training.kubeflow.org/job-name=x").
  std::string (*pod_selector)(const Json& job);
  // The pod whose log and metrics carry the result (the master, rank 0) and its main
  // container as the job's template declares it (for the trainer's flags), or null.
  std::string (*primary_pod)(const Json& job);
  Json (*primary_container)(const Json& job);
  // The job's pod templates, in the job's order: what `pjemu run` and `validate` check before
  // anything starts (their images, their volumes), since admission does not look into them.
  std::vector<PodTemplateRef> (*pod_templates)(const Json& job);
  // The job as its controller sees it: the in-memory defaults applied (`pjemu validate`).
  Json (*defaulted)(Json job);
  // Kueue's integration of the kind ("batch/job", "kubeflow.org/pytorchjob"; its events'
  // source is "<framework>-kueue-controller"), nullptr when Kueue does not integrate it (T9k's
  // kind); then the two below are nullptr too. Kueue suspends and resumes a queued job through
  // them (api/kueue.h's webhooks, emulator/kueue).
  const char* queue_framework = nullptr;
  bool (*suspended)(const Json& job) = nullptr;
  void (*set_suspended)(Json& job, bool suspend) = nullptr;
};

// The volume errors of every pod template of a job (PodSpecVolumeErrors, each prefixed
// `<name>.template.spec`). Empty for a type that is not a job kind.
std::vector<FieldError> TemplateVolumeErrors(const ResourceType& type, const Json& job);

// Workload::suspended / set_suspended for the kinds whose switch is spec.suspend (batch/v1 Job,
// JobSet, TrainJob).
bool SpecSuspended(const Json& job);
void SetSpecSuspended(Json& job, bool suspend);

// The workload table of a type, nullptr when it is not a job kind.
inline const Workload* WorkloadOf(const ResourceType& type) { return type.workload; }
// The state of an object of a job kind; empty for any other type.
WorkloadState StateOf(const ResourceType& type, const Json& job);
// The job kind of a stored object, by its apiVersion and kind; nullptr for any other object.
const ResourceType* WorkloadTypeOf(const Json& object);
// StateOf the object's own kind (as a watch or a GET returns it).
WorkloadState StateOf(const Json& object);

}  // namespace pjemu::api
