#include "emulator/batchjob/batchjob.h"

#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/batchjob/sync.h"

namespace pjemu::batchjob {

namespace bj = api::batchjob;
using api::Field, api::Str;

namespace {

// The selector's matchLabels as a label selector string ("" matches nothing: a Job always has
// one after defaulting).
std::string SelectorOf(const Json& job) {
  std::string out;
  for (const auto& [k, v] : api::ObjectOr(api::FieldAt(job, {"spec", "selector", "matchLabels"})).items()) {
    if (!v.is_string()) continue;
    out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  }
  return out;
}

}  // namespace

Reconciler::Reconciler(client::Client& client, const Clock& clock)
    : KindReconciler(client, clock, api::batchjob::kControllerName, "job") {}

Result<controller::ReconcileResult> Reconciler::ReconcileOnce(const controller::Request& request) {
  const api::ResourceType& kind = api::Jobs();
  ASSIGN_OR_RETURN(std::optional<Json> got,
                   controller::GetIfExists(client_, kind, request.ns, request.name));
  if (!got || api::Deleting(*got)) return controller::ReconcileResult{};
  const Json& stored = *got;
  const std::string selector = SelectorOf(stored);
  std::vector<Json> pods;
  if (!selector.empty()) {
    ASSIGN_OR_RETURN(pods, controller::ListControlled(client_, api::Pods(), stored, selector));
  }
  Sync sync = ComputeSync(stored, pods, clock_.Now());
  for (const Action& a : sync.actions) {
    switch (a.kind) {
      case Action::Kind::kEvent:
        (void)recorder_.Record(stored, a.event_type, a.reason, a.message);
        break;
      case Action::Kind::kCreatePod: {
        ASSIGN_OR_RETURN(Json pod, writer_.Create(stored, api::Pods(), a.pod, /*announce=*/false));
        (void)recorder_.Record(stored, "Normal", "SuccessfulCreate",
                               "Created pod: " + Str(Field(pod, "metadata"), "name"));
        break;
      }
      case Action::Kind::kDeletePod:
        RETURN_IF_ERROR(writer_.Delete(stored, api::Pods(), a.name, /*announce=*/false));
        (void)recorder_.Record(stored, "Normal", "SuccessfulDelete", "Deleted pod: " + a.name);
        break;
      case Action::Kind::kDeleteJob: {
        api::DeleteOptions background;
        background.propagation_policy = "Background";
        Result<Json> r = client_.Delete(kind, request.ns, request.name, background);
        if (!r.ok() && r.status().code() != Code::kNotFound) return r.status();
        return controller::ReconcileResult{};
      }
    }
  }
  if (sync.status_changed) {
    Json update = stored;
    update["status"] = sync.status;
    Result<Json> r = client_.Update(kind, request.ns, std::move(update), api::Subresource::kStatus);
    if (!r.ok()) return r.status().WithContext("update status of job " + request.Key());
  }
  controller::ReconcileResult result;
  if (sync.requeue_after) result.requeue_after = std::max(*sync.requeue_after, Duration(1));
  return result;
}

controller::KindSpec Kind(client::Client& client, const Clock& clock) {
  controller::KindSpec spec;
  spec.kind = &api::Jobs();
  spec.children = {{&api::Pods(), std::string(bj::kJobNameLabel)}};
  spec.reconciler = std::make_unique<Reconciler>(client, clock);
  return spec;
}

}  // namespace pjemu::batchjob
