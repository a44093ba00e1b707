#include "emulator/batchjob/batchjob.h"

#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/batchjob/sync.h"

namespace pjemu::batchjob {

namespace bj = api::batchjob;

namespace {

// The selector's matchLabels as a label selector string ("" matches nothing: a Job always has
// one after defaulting, and then no pods are read).
std::string SelectorOf(const Json& job) {
  std::string out;
  for (const auto& [k, v] :
       api::ObjectOr(api::FieldAt(job, {"spec", "selector", "matchLabels"})).items()) {
    if (!v.is_string()) continue;
    out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  }
  return out;
}

Sync SyncJob(const Json& job, const controller::Children& children, Time now) {
  return ComputeSync(job, children.Of(api::Pods()), now);
}

}  // namespace

// Kueue's integration of the kind (queue.cc).
extern const controller::QueueIntegration kQueue;

const controller::KindDescriptor& Descriptor() {
  using controller::ChildType;
  static const controller::KindDescriptor kKind = {
      api::Jobs,
      bj::kControllerName,
      {{api::Pods, ChildType::Read::kListControlled, SelectorOf, true, bj::kJobNameLabel}},
      SyncJob,
      controller::ChildEvents::kKubeControllerManager,
      /*install=*/nullptr,
      /*prepare=*/nullptr,
      /*decorate=*/nullptr,
      &kQueue,
  };
  return kKind;
}

}  // namespace pjemu::batchjob
