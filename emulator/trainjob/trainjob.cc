#include "emulator/trainjob/trainjob.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/resources.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/api/trainjob.h"
#include "emulator/trainjob/sync.h"

namespace pjemu::trainjob {

namespace atj = api::trainjob;

namespace {

// The runtimeRef's name when it names a TrainingRuntime (else a ClusterTrainingRuntime); ""
// for the other type (not read).
std::string NamespacedRuntime(const Json& tj) {
  const auto [kind, name] = atj::RuntimeRef(tj);
  return kind == atj::kTrainingRuntime ? name : "";
}
std::string ClusterRuntime(const Json& tj) {
  const auto [kind, name] = atj::RuntimeRef(tj);
  return kind == atj::kTrainingRuntime ? "" : name;
}

// The JobSet of the TrainJob's name.
std::string OwnName(const Json& tj) { return api::Str(api::Field(tj, "metadata"), "name"); }

Sync SyncTrainJob(const Json& tj, const controller::Children& children, Time now) {
  const Json* runtime = children.One(api::TrainingRuntimes());
  if (runtime == nullptr) runtime = children.One(api::ClusterTrainingRuntimes());
  return ComputeSync(tj, runtime, children.One(api::JobSets()),
                     children.One(api::SchedulerPluginsPodGroups()), now);
}

}  // namespace

// Kueue's integration of the kind (queue.cc).
extern const controller::QueueIntegration kQueue;

const controller::KindDescriptor& Descriptor() {
  using Read = controller::ChildType::Read;
  static const controller::KindDescriptor kKind = {
      api::TrainJobs,
      atj::kControllerName,
      {{api::TrainingRuntimes, Read::kByName, NamespacedRuntime, false, ""},
       {api::ClusterTrainingRuntimes, Read::kByName, ClusterRuntime, false, ""},
       {api::JobSets, Read::kByNameControlled, OwnName, true, ""},
       // The coscheduling plugin reads the PodGroup of the TrainJob's name, whoever owns it,
       // and watches those the TrainJob controls.
       {api::SchedulerPluginsPodGroups, Read::kByName, OwnName, true, ""}},
      SyncTrainJob,
      controller::ChildEvents::kNone,
      InstallDefaultRuntimes,
      /*prepare=*/nullptr,
      /*decorate=*/nullptr,
      &kQueue,
  };
  return kKind;
}

Status InstallDefaultRuntimes(client::Client& client) {
  Result<Json> r = client.Create(api::ClusterTrainingRuntimes(), "",
                                 atj::DefaultClusterTrainingRuntime());
  if (!r.ok() && r.status().code() != Code::kAlreadyExists) return r.status();
  return Status::Ok();
}

}  // namespace pjemu::trainjob
