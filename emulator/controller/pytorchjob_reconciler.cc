#include "emulator/controller/pytorchjob_reconciler.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/controller/job_spec.h"
#include "emulator/controller/job_status.h"

namespace pjemu::controller {

using api::Field, api::IsSuspended, api::ManagedByExternalController, api::SetDefaults, api::Str;
using api::kControllerName, api::kJobNameLabel, api::kOperatorNameLabel;

namespace {

const api::ResourceType& Hpas() {
  return *api::FindResource("autoscaling", "horizontalpodautoscalers");
}

}  // namespace

PyTorchJobReconciler::PyTorchJobReconciler(client::Client& client, const Clock& clock,
                                           InitContainerOptions init, GangOptions gang)
    : client_(client),
      clock_(clock),
      init_(std::move(init)),
      gang_(std::move(gang)),
      recorder_(client, clock, api::kControllerName),
      writer_(client, recorder_) {}

Result<std::vector<Json>> PyTorchJobReconciler::ListOwned(const api::ResourceType& type,
                                                          const Json& job) {
  return ListControlled(client_, type, job,
                        std::string(kJobNameLabel) + "=" + Str(Field(job, "metadata"), "name") +
                            "," + kOperatorNameLabel + "=" + kControllerName);
}

Status PyTorchJobReconciler::Execute(const Json& job, const JobAction& a) {
  const std::string ns = Str(Field(job, "metadata"), "namespace");
  using Kind = JobAction::Kind;
  switch (a.kind) {
    case Kind::kEvent:
      (void)recorder_.Record(job, a.event_type, a.reason, a.message);
      return Status::Ok();
    case Kind::kCreatePod:
      return writer_.Create(job, api::Pods(), WithGang(a.object, job, gang_, recorder_),
                            /*announce=*/true).status();
    case Kind::kCreateService:
      return writer_.Create(job, api::Services(), a.object, /*announce=*/true).status();
    case Kind::kDeletePod:
      return writer_.Delete(job, api::Pods(), a.name, /*announce=*/true);
    case Kind::kDeleteService:
      return writer_.Delete(job, api::Services(), a.name, /*announce=*/true);
    case Kind::kDeleteJob: {
      // Upstream records a job's TTL deletion under the pods' event reasons.
      Result<Json> r = client_.Delete(api::PyTorchJobs(), ns, a.name);
      if (!r.ok() && r.status().code() != Code::kNotFound) {
        (void)recorder_.Record(job, "Warning", "FailedDeletePod",
                               "Error deleting: " + r.status().message());
        return r.status();
      }
      (void)recorder_.Record(job, "Normal", "SuccessfulDeletePod", "Deleted job: " + a.name);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status PyTorchJobReconciler::ReconcileHpa(const Json& job) {
  Json desired = DesiredHpa(job);
  if (desired.is_null()) return Status::Ok();
  const Json& meta = Field(job, "metadata");
  const std::string ns = Str(meta, "namespace");
  Result<Json> current = client_.Get(Hpas(), ns, Str(meta, "name"));
  if (!current.ok()) {
    if (current.status().code() != Code::kNotFound) return current.status();
    if (IsSuspended(job)) return Status::Ok();
    return client_.Create(Hpas(), ns, desired).status();
  }
  if (IsSuspended(job)) return client_.Delete(Hpas(), ns, Str(meta, "name")).status();
  if (Field(*current, "spec") == desired["spec"]) return Status::Ok();
  Json updated = *current;
  updated["spec"] = desired["spec"];
  return client_.Update(Hpas(), ns, updated).status();
}

Result<ReconcileResult> PyTorchJobReconciler::Reconcile(const Request& request) {
  // Objects are user JSON; a shape nlohmann cannot read becomes an error, never an exception.
  try {
    return ReconcileOnce(request);
  } catch (const Json::exception& e) {
    return InternalError("reconcile pytorchjob " + request.Key() + ": " + e.what());
  }
}

Result<ReconcileResult> PyTorchJobReconciler::ReconcileOnce(const Request& request) {
  Result<Json> got = client_.Get(api::PyTorchJobs(), request.ns, request.name);
  if (!got.ok()) {
    if (got.status().code() == Code::kNotFound) return ReconcileResult{};
    return got.status();
  }
  const Json& stored = *got;
  if (ManagedByExternalController(stored)) return ReconcileResult{};
  if (!Field(Field(stored, "metadata"), "deletionTimestamp").is_null()) return ReconcileResult{};

  Json job = SetDefaults(stored);
  RETURN_IF_ERROR(ReconcileHpa(job));
  RETURN_IF_ERROR(SyncPodGroup(client_, recorder_, job, gang_));  // before the pods
  ASSIGN_OR_RETURN(std::vector<Json> pods, ListOwned(api::Pods(), job));
  ASSIGN_OR_RETURN(std::vector<Json> services, ListOwned(api::Services(), job));

  JobSync sync = ComputeJobStatus(job, pods, services, clock_.Now(), init_);
  for (const JobAction& action : sync.actions) {
    RETURN_IF_ERROR(Execute(stored, action));
    if (action.kind == JobAction::Kind::kDeleteJob) return ReconcileResult{};
  }
  RETURN_IF_ERROR(sync.error);
  if (sync.status_changed) {
    Json update = stored;
    update["status"] = sync.status;
    Result<Json> r = client_.Update(api::PyTorchJobs(), request.ns, std::move(update),
                                    api::Subresource::kStatus);
    if (!r.ok()) return r.status().WithContext("update status of pytorchjob " + request.Key());
  }
  ReconcileResult result;
  if (sync.requeue_after) {
    // A zero wait means "now"; one nanosecond keeps it a timed requeue on a virtual clock.
    result.requeue_after = std::max(*sync.requeue_after, Duration(1));
  }
  return result;
}

KindSpec PyTorchJobKind(client::Client& client, const Clock& clock, InitContainerOptions init,
                        GangOptions gang) {
  const std::string operator_label = std::string(kOperatorNameLabel) + "=" + kControllerName;
  KindSpec spec;
  spec.kind = &api::PyTorchJobs();
  spec.children = {{&api::Pods(), operator_label}, {&api::Services(), operator_label}};
  spec.reconciler =
      std::make_unique<PyTorchJobReconciler>(client, clock, std::move(init), std::move(gang));
  return spec;
}

}  // namespace pjemu::controller
