#include "emulator/trainjob/trainjob.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/api/trainjob.h"
#include "emulator/trainjob/sync.h"

namespace pjemu::trainjob {

namespace atj = api::trainjob;

Reconciler::Reconciler(client::Client& client, const Clock& clock)
    : KindReconciler(client, clock, atj::kControllerName, "trainjob") {}

using controller::GetIfExists;

Result<controller::ReconcileResult> Reconciler::ReconcileOnce(const controller::Request& request) {
  const api::ResourceType& kind = api::TrainJobs();
  ASSIGN_OR_RETURN(std::optional<Json> stored, GetIfExists(client_, kind, request.ns, request.name));
  if (!stored || api::Deleting(*stored)) return controller::ReconcileResult{};
  const auto [runtime_kind, runtime_name] = atj::RuntimeRef(*stored);
  const api::ResourceType& runtime_type = runtime_kind == atj::kTrainingRuntime
                                              ? api::TrainingRuntimes()
                                              : api::ClusterTrainingRuntimes();
  ASSIGN_OR_RETURN(std::optional<Json> runtime,
                   GetIfExists(client_, runtime_type, request.ns, runtime_name));
  ASSIGN_OR_RETURN(std::optional<Json> js,
                   GetIfExists(client_, api::JobSets(), request.ns, request.name));
  const std::string uid = api::Str(api::Field(*stored, "metadata"), "uid");
  if (js && !controller::ControlledBy(*js, uid)) js.reset();  // not ours: never adopted
  Sync sync = ComputeSync(*stored, runtime ? &*runtime : nullptr, js ? &*js : nullptr,
                          clock_.Now());
  for (const Action& a : sync.actions) {
    switch (a.kind) {
      case Action::Kind::kEvent:
        (void)recorder_.Record(*stored, a.event_type, a.reason, a.message);
        break;
      case Action::Kind::kCreateJobSet:
        RETURN_IF_ERROR(writer_.Create(*stored, api::JobSets(), a.object, false).status());
        break;
      case Action::Kind::kUpdateJobSet:
        RETURN_IF_ERROR(client_.Update(api::JobSets(), request.ns, a.object).status());
        break;
      case Action::Kind::kDeleteJobSet:
        RETURN_IF_ERROR(writer_.Delete(*stored, api::JobSets(), request.name, false));
        break;
    }
  }
  if (sync.status_changed) {
    Json update = *stored;
    update["status"] = sync.status;
    Result<Json> r = client_.Update(kind, request.ns, std::move(update), api::Subresource::kStatus);
    if (!r.ok()) return r.status().WithContext("update status of trainjob " + request.Key());
  }
  controller::ReconcileResult result;
  if (sync.requeue_after) result.requeue_after = std::max(*sync.requeue_after, Duration(1));
  return result;
}

controller::KindSpec Kind(client::Client& client, const Clock& clock) {
  controller::KindSpec spec;
  spec.kind = &api::TrainJobs();
  spec.children = {{&api::JobSets(), ""}};
  spec.reconciler = std::make_unique<Reconciler>(client, clock);
  return spec;
}

Status InstallDefaultRuntimes(client::Client& client) {
  Result<Json> r = client.Create(api::ClusterTrainingRuntimes(), "",
                                 atj::DefaultClusterTrainingRuntime());
  if (!r.ok() && r.status().code() != Code::kAlreadyExists) return r.status();
  return Status::Ok();
}

}  // namespace pjemu::trainjob
