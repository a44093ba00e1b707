#include "emulator/t9kjob/t9kjob.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/api/t9k.h"
#include "emulator/t9kjob/sync.h"

namespace pjemu::t9kjob {

namespace t9k = api::t9k;
using api::Field, api::Str;

Reconciler::Reconciler(client::Client& client, const Clock& clock)
    : KindReconciler(client, clock, t9k::kControllerName, "pytorchtrainingjob") {}

Result<controller::ReconcileResult> Reconciler::ReconcileOnce(const controller::Request& request) {
  const api::ResourceType& kind = api::PyTorchTrainingJobs();
  ASSIGN_OR_RETURN(std::optional<Json> got,
                   controller::GetIfExists(client_, kind, request.ns, request.name));
  if (!got || api::Deleting(*got)) return controller::ReconcileResult{};
  const Json& stored = *got;
  const std::string selector = std::string(t9k::kOwnerNameLabel) + "=" + request.name;
  Children children;
  ASSIGN_OR_RETURN(children.pods, controller::ListControlled(client_, api::Pods(), stored, selector));
  ASSIGN_OR_RETURN(children.services,
                   controller::ListControlled(client_, api::Services(), stored, selector));
  ASSIGN_OR_RETURN(children.tensorboards,
                   controller::ListControlled(client_, api::TensorBoards(), stored, selector));

  Sync sync = ComputeSync(t9k::SetDefaults(stored), children, clock_.Now());
  for (const Action& a : sync.actions) {
    switch (a.kind) {
      case Action::Kind::kEvent:
        (void)recorder_.Record(stored, a.event_type, a.reason, a.message);
        break;
      case Action::Kind::kCreate:
        RETURN_IF_ERROR(writer_.Create(stored, *a.type, a.object, /*announce=*/false).status());
        break;
      case Action::Kind::kDelete:
        RETURN_IF_ERROR(writer_.Delete(stored, *a.type, a.name, /*announce=*/false));
        break;
    }
  }
  if (sync.status_changed) {
    Json update = stored;
    update["status"] = sync.status;
    Result<Json> r = client_.Update(kind, request.ns, std::move(update), api::Subresource::kStatus);
    if (!r.ok()) return r.status().WithContext("update status of pytorchtrainingjob " + request.Key());
  }
  RETURN_IF_ERROR(sync.error);
  controller::ReconcileResult result;
  if (sync.requeue_after) result.requeue_after = std::max(*sync.requeue_after, Duration(1));
  return result;
}

controller::KindSpec Kind(client::Client& client, const Clock& clock) {
  const std::string owned = std::string(t9k::kOwnerNameLabel);  // the label exists
  controller::KindSpec spec;
  spec.kind = &api::PyTorchTrainingJobs();
  spec.children = {{&api::Pods(), owned}, {&api::Services(), owned}, {&api::TensorBoards(), owned}};
  spec.reconciler = std::make_unique<Reconciler>(client, clock);
  return spec;
}

}  // namespace pjemu::t9kjob
