#include "emulator/jobset/jobset.h"

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/jobset/sync.h"

namespace pjemu::jobset {

namespace ajs = api::jobset;

namespace {

std::string OwnJobs(const Json& js) {
  return std::string(ajs::kJobSetNameKey) + "=" + api::Str(api::Field(js, "metadata"), "name");
}

Sync SyncJobSet(const Json& js, const controller::Children& children, Time now) {
  return ComputeSync(js, children.Of(api::Jobs()), children.One(api::Services()) != nullptr, now);
}

}  // namespace

// Kueue's integration of the kind (queue.cc).
extern const controller::QueueIntegration kQueue;

const controller::KindDescriptor& Descriptor() {
  using Read = controller::ChildType::Read;
  static const controller::KindDescriptor kKind = {
      api::JobSets,
      ajs::kControllerName,
      {{api::Jobs, Read::kListControlled, OwnJobs, true, ajs::kJobSetNameKey},
       {api::Services, Read::kByName, ajs::Subdomain, false, ""}},
      SyncJobSet,
      controller::ChildEvents::kNone,
      /*install=*/nullptr,
      /*prepare=*/nullptr,
      /*decorate=*/nullptr,
      &kQueue,
  };
  return kKind;
}

}  // namespace pjemu::jobset
