#include "emulator/jobset/jobset.h"

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/jobset/sync.h"

namespace pjemu::jobset {

namespace ajs = api::jobset;
using api::Field, api::Str;

Reconciler::Reconciler(client::Client& client, const Clock& clock)
    : KindReconciler(client, clock, ajs::kControllerName, "jobset") {}

Result<controller::ReconcileResult> Reconciler::ReconcileOnce(const controller::Request& request) {
  const api::ResourceType& kind = api::JobSets();
  ASSIGN_OR_RETURN(std::optional<Json> got,
                   controller::GetIfExists(client_, kind, request.ns, request.name));
  if (!got || api::Deleting(*got)) return controller::ReconcileResult{};
  const Json& stored = *got;
  const std::string selector = std::string(ajs::kJobSetNameKey) + "=" + request.name;
  ASSIGN_OR_RETURN(std::vector<Json> jobs,
                   controller::ListControlled(client_, api::Jobs(), stored, selector));
  ASSIGN_OR_RETURN(std::optional<Json> svc, controller::GetIfExists(client_, api::Services(),
                                                                    request.ns, ajs::Subdomain(stored)));
  Sync sync = ComputeSync(stored, jobs, svc.has_value(), clock_.Now());
  for (const Action& a : sync.actions) {
    switch (a.kind) {
      case Action::Kind::kEvent:
        (void)recorder_.Record(stored, a.event_type, a.reason, a.message);
        break;
      case Action::Kind::kCreateJob:
        RETURN_IF_ERROR(writer_.Create(stored, api::Jobs(), a.object, /*announce=*/false).status());
        break;
      case Action::Kind::kCreateService: {
        Result<Json> r = writer_.Create(stored, api::Services(), a.object, /*announce=*/false);
        if (!r.ok() && r.status().code() != Code::kAlreadyExists) return r.status();
        break;
      }
      case Action::Kind::kUpdateJob:
        RETURN_IF_ERROR(client_.Update(api::Jobs(), request.ns, a.object).status());
        break;
      case Action::Kind::kDeleteJob: {  // deleteJobs: background propagation takes the pods
        api::DeleteOptions background;
        background.propagation_policy = "Background";
        Result<Json> r = client_.Delete(api::Jobs(), request.ns, a.name, background);
        if (!r.ok() && r.status().code() != Code::kNotFound) return r.status();
        break;
      }
    }
  }
  if (sync.status_changed) {
    Json update = stored;
    update["status"] = sync.status;
    Result<Json> r = client_.Update(kind, request.ns, std::move(update), api::Subresource::kStatus);
    if (!r.ok()) return r.status().WithContext("update status of jobset " + request.Key());
  }
  return controller::ReconcileResult{};
}

controller::KindSpec Kind(client::Client& client, const Clock& clock) {
  controller::KindSpec spec;
  spec.kind = &api::JobSets();
  spec.children = {{&api::Jobs(), std::string(ajs::kJobSetNameKey)}};
  spec.reconciler = std::make_unique<Reconciler>(client, clock);
  return spec;
}

}  // namespace pjemu::jobset
