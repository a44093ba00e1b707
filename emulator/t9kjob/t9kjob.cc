#include "emulator/t9kjob/t9kjob.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/api/resources.h"
#include "emulator/api/t9k.h"
#include "emulator/t9kjob/sync.h"

namespace pjemu::t9kjob {

namespace t9k = api::t9k;

namespace {

std::string Owned(const Json& job) {
  return std::string(t9k::kOwnerNameLabel) + "=" + api::Str(api::Field(job, "metadata"), "name");
}

Sync SyncJob(const Json& job, const controller::Children& children, Time now) {
  return ComputeSync(
      t9k::SetDefaults(api::CopyWithoutManagedFields(job)),
      {children.Of(api::Pods()), children.Of(api::Services()), children.Of(api::TensorBoards())},
      now);
}

}  // namespace

const controller::KindDescriptor& Descriptor() {
  using Read = controller::ChildType::Read;
  static const controller::KindDescriptor kKind = {
      api::PyTorchTrainingJobs,
      t9k::kControllerName,
      {{api::Pods, Read::kListControlled, Owned, true, t9k::kOwnerNameLabel},
       {api::Services, Read::kListControlled, Owned, true, t9k::kOwnerNameLabel},
       {api::TensorBoards, Read::kListControlled, Owned, true, t9k::kOwnerNameLabel}},
      SyncJob,
  };
  return kKind;
}

}  // namespace pjemu::t9kjob
