#include "emulator/pytorchjob/pytorchjob.h"

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/resources.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/pytorchjob/desired_objects.h"
#include "emulator/pytorchjob/job_status.h"
#include "emulator/pytorchjob/pod_group.h"

namespace pjemu::pytorchjob {

using api::Field, api::IsSuspended, api::ManagedByExternalController, api::SetDefaults, api::Str;
using api::kControllerName, api::kJobNameLabel, api::kOperatorNameLabel;
using controller::Action;

namespace {

const api::ResourceType& Hpas() {
  return *api::FindResource("autoscaling", "horizontalpodautoscalers");
}

const std::string kOperatorLabel = std::string(kOperatorNameLabel) + "=" + kControllerName;

// The pods and services a pass reads: none for a job another controller manages.
std::string Owned(const Json& job) {
  if (ManagedByExternalController(job)) return "";
  return std::string(kJobNameLabel) + "=" + Str(Field(job, "metadata"), "name") + "," +
         kOperatorLabel;
}

// The HPA of the job's name, read only for an elastic job with metrics.
std::string HpaName(const Json& job) {
  // Only an elasticPolicy with metrics makes an HPA (DesiredHpa), and defaulting adds neither:
  // a job without them needs no defaulted copy to tell (every reconcile asks).
  const Json& elastic = Field(Field(job, "spec"), "elasticPolicy");
  if (!elastic.is_object() || Field(elastic, "metrics").is_null()) return "";
  if (ManagedByExternalController(job) || DesiredHpa(SetDefaults(job)).is_null()) return "";
  return Str(Field(job, "metadata"), "name");
}

// The elastic HPA: created while the job runs, deleted while it is suspended, its spec kept.
void ReconcileHpa(const Json& job, const Json* current, std::vector<Action>& out) {
  Json desired = DesiredHpa(job);
  if (desired.is_null()) return;
  Action a;
  if (current == nullptr) {
    if (IsSuspended(job)) return;
    a = Action::Create(Hpas(), std::move(desired));
  } else if (IsSuspended(job)) {
    a = Action::Delete(Hpas(), Str(Field(job, "metadata"), "name"));
  } else if (Field(*current, "spec") == desired["spec"]) {
    return;
  } else {
    Json updated = *current;
    updated["spec"] = desired["spec"];
    a = Action::Update(Hpas(), std::move(updated));
  }
  a.quiet = true;
  out.push_back(std::move(a));
}

// The stored job defaulted, as the operator's passes read it; without its managedFields, which
// nothing here reads (a copy that leaves them out costs less than one that keeps them).
Json Defaulted(const Json& stored) { return SetDefaults(api::CopyWithoutManagedFields(stored)); }

// --gang-scheduler-name: the job's PodGroup, synced before the pass's writes (pod_group.h).
Status PrepareGang(client::Client& client, controller::EventRecorder& recorder, const Json& stored,
                   const controller::KindOptions& options) {
  const GangOptions gang{options.gang_scheduler_name};
  if (!gang.enabled() || ManagedByExternalController(stored)) return Status::Ok();
  return SyncPodGroup(client, recorder, Defaulted(stored), gang);
}

// --gang-scheduler-name: each pod it creates, decorated for the gang (pod_group.h).
Json DecorateGang(Json child, const api::ResourceType& type, const Json& stored,
                  const controller::KindOptions& options, controller::EventRecorder& recorder) {
  if (type != api::Pods()) return child;
  return WithGang(std::move(child), stored, {options.gang_scheduler_name}, recorder);
}

}  // namespace

controller::Sync SyncPyTorchJob(const Json& stored, const controller::Children& children,
                                Time now) {
  if (ManagedByExternalController(stored)) return {};
  Json job = Defaulted(stored);
  std::vector<Action> hpa;
  ReconcileHpa(job, children.One(Hpas()), hpa);
  controller::Sync sync =
      ComputeJobStatus(job, children.Of(api::Pods()), children.Of(api::Services()), now);
  sync.actions.insert(sync.actions.begin(), hpa.begin(), hpa.end());
  return sync;
}

// Kueue's integration of the kind (queue.cc).
extern const controller::QueueIntegration kQueue;

const controller::KindDescriptor& Descriptor() {
  using Read = controller::ChildType::Read;
  static const controller::KindDescriptor kKind = {
      api::PyTorchJobs,
      kControllerName,
      {{api::Pods, Read::kListControlled, Owned, true, kOperatorLabel},
       {api::Services, Read::kListControlled, Owned, true, kOperatorLabel},
       {Hpas, Read::kByName, HpaName, false, ""}},
      SyncPyTorchJob,
      controller::ChildEvents::kKubeflow,
      /*install=*/nullptr,
      PrepareGang,
      DecorateGang,
      &kQueue,
  };
  return kKind;
}

}  // namespace pjemu::pytorchjob
