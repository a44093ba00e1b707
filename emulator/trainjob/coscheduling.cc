#include "emulator/trainjob/coscheduling.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_resources.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/trainjob.h"
#include "emulator/controller/children.h"

namespace pjemu::trainjob {

namespace atj = api::trainjob;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

bool Coscheduled(const Json& runtime) { return atj::Coscheduling(runtime) != nullptr; }

void LabelPodTemplates(Json& jobset, const std::string& name) {
  if (!FieldAt(jobset, {"spec", "replicatedJobs"}).is_array()) return;
  for (Json& rjob : jobset["spec"]["replicatedJobs"]) {
    Json& labels = rjob["template"]["spec"]["template"]["metadata"]["labels"];
    if (!labels.is_object()) labels = Json::object();
    labels[api::kPodGroupLabel] = name;
  }
}

Json DesiredPodGroup(const Json& tj, const Json& runtime, const Json& jobset) {
  std::int64_t members = 0;
  api::QuantityList resources;
  for (const Json& rjob : ArrayOr(FieldAt(jobset, {"spec", "replicatedJobs"}))) {
    const Json& job_spec = FieldAt(rjob, {"template", "spec"});
    // runtime.WithPodSet: the Job's parallelism (default 1), at least 1.
    const std::int64_t count =
        std::max<std::int64_t>(OptInt(job_spec, "parallelism").value_or(1), 1);
    members += count;
    resources.Add(api::PodSpecRequests(FieldAt(job_spec, {"template", "spec"})), count);
  }
  const Json& meta = Field(tj, "metadata");
  return {{"apiVersion", api::SchedulerPluginsPodGroups().ApiVersion()},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", Str(meta, "name")},
            {"namespace", Str(meta, "namespace")},
            {"ownerReferences", Json::array({controller::ControllerRef(tj)})}}},
          {"spec",
           {{"minMember", members},
            {"minResources", resources.ToJson()},
            {"scheduleTimeoutSeconds", atj::ScheduleTimeoutSeconds(*atj::Coscheduling(runtime))}}}};
}

std::optional<Json> PodGroupToApply(const Json& tj, const Json* current, const Json& desired) {
  if (current == nullptr) return desired;
  if (FieldAt(tj, {"spec", "suspend"}) != Json(true)) return std::nullopt;
  Json applied = *current;
  for (const char* key : {"minMember", "minResources", "scheduleTimeoutSeconds"}) {
    applied["spec"][key] = desired["spec"][key];
  }
  // ownerReferences merge by uid, as server-side apply merges that list.
  const Json& ours = desired["metadata"]["ownerReferences"][0];
  Json& refs = applied["metadata"]["ownerReferences"];
  if (!refs.is_array()) refs = Json::array();
  auto same = std::find_if(refs.begin(), refs.end(),
                           [&](const Json& r) { return Str(r, "uid") == Str(ours, "uid"); });
  if (same != refs.end()) {
    *same = ours;
  } else {
    refs.push_back(ours);
  }
  if (applied == *current) return std::nullopt;
  return applied;
}

}  // namespace pjemu::trainjob
