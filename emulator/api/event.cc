#include "emulator/api/event.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "emulator/api/json_fields.h"

namespace pjemu::api {

std::string EventName(std::string_view object_name, Time now) {
  static std::atomic<std::uint64_t> counter{0};
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ns) + counter++);
  return std::string(object_name) + "." + buf;
}

Json ObjectReferenceOf(const Json& object) {
  const Json& meta = Field(object, "metadata");
  Json ref = Json::object();
  ref["apiVersion"] = Str(object, "apiVersion");
  ref["kind"] = Str(object, "kind");
  ref["name"] = Str(meta, "name");
  ref["uid"] = Str(meta, "uid");
  for (const char* key : {"namespace", "resourceVersion"}) {
    if (const Json& v = Field(meta, key); !v.is_null()) ref[key] = v;
  }
  return ref;
}

// Built field by field: an initializer list would copy `involved` and check every pair.
Json MakeEvent(Json involved, std::string_view type, std::string_view reason,
               std::string_view message, const EventSource& source, Time now) {
  const std::string ts = FormatTime(now);
  Json event = Json::object();
  event["apiVersion"] = "v1";
  event["kind"] = "Event";
  Json& meta = event["metadata"];
  meta["name"] = EventName(Str(involved, "name"), now);
  meta["namespace"] = Str(involved, "namespace");
  event["involvedObject"] = std::move(involved);
  event["reason"] = reason;
  event["message"] = message;
  event["type"] = type;
  Json& src = event["source"];
  src["component"] = source.component;
  if (!source.host.empty()) src["host"] = source.host;
  event["reportingComponent"] = source.component;
  event["reportingInstance"] = source.host;
  event["firstTimestamp"] = ts;
  event["lastTimestamp"] = ts;
  event["eventTime"] = nullptr;
  event["count"] = 1;
  return event;
}

}  // namespace pjemu::api
