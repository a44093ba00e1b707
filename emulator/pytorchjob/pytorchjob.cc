#include "emulator/pytorchjob/pytorchjob.h"

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/resources.h"
#include "emulator/pytorchjob/desired_objects.h"
#include "emulator/pytorchjob/job_status.h"

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

}  // namespace

controller::Sync SyncPyTorchJob(const Json& stored, const controller::Children& children,
                                Time now) {
  if (ManagedByExternalController(stored)) return {};
  Json job = SetDefaults(stored);
  std::vector<Action> hpa;
  ReconcileHpa(job, children.One(Hpas()), hpa);
  controller::Sync sync =
      ComputeJobStatus(job, children.Of(api::Pods()), children.Of(api::Services()), now);
  sync.actions.insert(sync.actions.begin(), hpa.begin(), hpa.end());
  return sync;
}

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
  };
  return kKind;
}

}  // namespace pjemu::pytorchjob
