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
    used_.splice(used_.begin(), used_, it->second.used);
    const std::string& name = it->second.name;
    Result<Json> current = client_.Get(api::Events(), ns, name);
    if (current.ok()) {
      std::int64_t count = OptInt(*current, "count").value_or(1) + 1;
      Json patch = {{"count", count}, {"lastTimestamp", ts}};
      auto r = client_.PatchShared(api::Events(), ns, name, api::PatchType::kMerge, patch);
      if (r.ok()) return Status::Ok();
    }
    used_.erase(it->second.used);  // gone (TTL, deleted with its object): start a new one
    names_.erase(it);
  }
  Json event = api::MakeEvent(api::ObjectReferenceOf(object), type, reason, message,
                              {component_, ""}, now);
  const std::string name = event["metadata"]["name"];
  auto created = client_.CreateShared(api::Events(), ns, std::move(event));
  if (!created.ok()) return created.status();
  Remember(key, name);
  return Status::Ok();
}

void EventRecorder::Remember(const Key& key, std::string name) {
  auto [it, added] = names_.try_emplace(key);
  if (!added) used_.erase(it->second.used);
  it->second.name = std::move(name);
  used_.push_front(&it->first);
  it->second.used = used_.begin();
  if (names_.size() <= kCorrelatorEntries) return;
  names_.erase(*used_.back());
  used_.pop_back();
}

}  // namespace pjemu::controller
