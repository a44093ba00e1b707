#include "emulator/controller/queue_integration.h"

#include "emulator/api/json_fields.h"

namespace pjemu::controller {
namespace {

// Kueue's restore of a pod template: the original's nodeSelector and tolerations, and the
// labels and annotations Kueue added gone (the original's values back), the rest as it is.
void Restore(Json& pod_template, const Json& original) {
  for (const char* key : {"nodeSelector", "tolerations"}) {
    const Json& was = api::FieldAt(original, {"spec", key});
    if (was.is_null()) {
      if (pod_template["spec"].is_object()) pod_template["spec"].erase(key);
    } else {
      pod_template["spec"][key] = was;
    }
  }
  for (const char* key : {"labels", "annotations"}) {
    Json& now = pod_template["metadata"][key];
    if (!now.is_object()) continue;
    const Json& was = api::FieldAt(original, {"metadata", key});
    for (auto it = now.begin(); it != now.end();) {
      const bool kueue = it.key().rfind(api::kueue::kGroup, 0) == 0;
      if (kueue && !api::Field(was, it.key().c_str()).is_string()) {
        it = now.erase(it);
      } else {
        if (kueue) *it = was[it.key()];
        ++it;
      }
    }
    if (now.empty()) pod_template["metadata"].erase(key);
  }
}

}  // namespace

Result<Json> StartTemplates(Json job, const std::vector<api::kueue::PodSetPlacement>& placements,
                            std::vector<Json*> (*templates)(Json& job),
                            void (*set_suspended)(Json& job, bool suspend)) {
  std::vector<Json*> at = templates(job);
  for (std::size_t i = 0; i < at.size() && i < placements.size(); ++i) {
    RETURN_IF_ERROR(api::kueue::Place(*at[i], placements[i]));
  }
  set_suspended(job, false);
  return job;
}

Json StopTemplates(Json job, const std::vector<api::kueue::PodSet>& original,
                   std::vector<Json*> (*templates)(Json& job),
                   void (*set_suspended)(Json& job, bool suspend)) {
  std::vector<Json*> at = templates(job);
  for (std::size_t i = 0; i < at.size() && i < original.size(); ++i) {
    Restore(*at[i], original[i].pod_template);
  }
  set_suspended(job, true);
  return job;
}

}  // namespace pjemu::controller
