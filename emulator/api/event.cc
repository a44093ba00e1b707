#include "emulator/api/event.h"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace pjemu::api {

std::string EventName(std::string_view object_name, Time now) {
  static std::atomic<std::uint64_t> counter{0};
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ns) + counter++);
  return std::string(object_name) + "." + buf;
}

Json ObjectReferenceOf(const Json& object) {
  const Json& meta = object.contains("metadata") ? object["metadata"] : Json::object();
  Json ref = {{"apiVersion", object.value("apiVersion", "")},
              {"kind", object.value("kind", "")},
              {"name", meta.value("name", "")},
              {"uid", meta.value("uid", "")}};
  if (meta.contains("namespace")) ref["namespace"] = meta["namespace"];
  if (meta.contains("resourceVersion")) ref["resourceVersion"] = meta["resourceVersion"];
  return ref;
}

Json MakeEvent(const Json& involved, std::string_view type, std::string_view reason,
               std::string_view message, const EventSource& source, Time now) {
  const std::string ts = FormatTime(now);
  Json src = {{"component", source.component}};
  if (!source.host.empty()) src["host"] = source.host;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", EventName(involved.value("name", ""), now)},
            {"namespace", involved.value("namespace", "")}}},
          {"involvedObject", involved},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"source", src},
          {"reportingComponent", source.component},
          {"reportingInstance", source.host},
          {"firstTimestamp", ts},
          {"lastTimestamp", ts},
          {"eventTime", nullptr},
          {"count", 1}};
}

}  // namespace pjemu::api
