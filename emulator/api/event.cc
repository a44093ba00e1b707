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
  Json ref = Json::object();  // in key order (AppendMember)
  AppendMember(ref, "apiVersion", Str(object, "apiVersion"));
  AppendMember(ref, "kind", Str(object, "kind"));
  AppendMember(ref, "name", Str(meta, "name"));
  if (const Json& v = Field(meta, "namespace"); !v.is_null()) AppendMember(ref, "namespace", v);
  if (const Json& v = Field(meta, "resourceVersion"); !v.is_null()) {
    AppendMember(ref, "resourceVersion", v);
  }
  AppendMember(ref, "uid", Str(meta, "uid"));
  return ref;
}

// Built field by field (an initializer list would copy `involved` and check every pair), in key
// order (AppendMember).
Json MakeEvent(Json involved, std::string_view type, std::string_view reason,
               std::string_view message, const EventSource& source, Time now) {
  const std::string ts = FormatTime(now);
  Json meta = Json::object();
  meta["name"] = EventName(Str(involved, "name"), now);
  meta["namespace"] = Str(involved, "namespace");
  Json src = Json::object();
  src["component"] = source.component;
  if (!source.host.empty()) src["host"] = source.host;
  Json event = Json::object();
  auto add = [&](std::string_view key, Json value) { AppendMember(event, key, std::move(value)); };
  add("apiVersion", "v1");
  add("count", 1);
  add("eventTime", nullptr);
  add("firstTimestamp", ts);
  add("involvedObject", std::move(involved));
  add("kind", "Event");
  add("lastTimestamp", ts);
  add("message", message);
  add("metadata", std::move(meta));
  add("reason", reason);
  add("reportingComponent", source.component);
  add("reportingInstance", source.host);
  add("source", std::move(src));
  add("type", type);
  return event;
}

}  // namespace pjemu::api
