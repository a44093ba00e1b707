#include "emulator/controller/event_recorder.h"

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/resources.h"

namespace pjemu::controller {

using api::Field, api::OptInt, api::Str;

Status EventRecorder::Record(const Json& object, const std::string& type, const std::string& reason,
                             const std::string& message) {
  const Json& meta = Field(object, "metadata");
  const std::string ns = Str(meta, "namespace");
  const Time now = clock_.Now();
  const std::string ts = FormatTime(now);
  Key key{Str(meta, "uid"), type, reason, message};
  auto it = names_.find(key);
  if (it != names_.end()) {
    Json patch = nullptr;
    Result<Json> current = client_.Get(api::Events(), ns, it->second);
    if (current.ok()) {
      std::int64_t count = OptInt(*current, "count").value_or(1) + 1;
      patch = {{"count", count}, {"lastTimestamp", ts}};
      auto r = client_.PatchShared(api::Events(), ns, it->second, api::PatchType::kMerge, patch);
      if (r.ok()) return Status::Ok();
    }
    names_.erase(it);  // gone (TTL, deleted with its object): start a new one
  }
  Json event = api::MakeEvent(api::ObjectReferenceOf(object), type, reason, message,
                              {component_, ""}, now);
  const std::string name = event["metadata"]["name"];
  auto created = client_.CreateShared(api::Events(), ns, std::move(event));
  if (!created.ok()) return created.status();
  names_[key] = name;
  return Status::Ok();
}

}  // namespace pjemu::controller
