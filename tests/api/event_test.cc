// The Events every component records: the fields client-go's recorder writes for a first
// occurrence.
#include "emulator/api/event.h"

#include <catch2/catch.hpp>

namespace pjemu::api {
namespace {

TEST_CASE("MakeEvent writes a first occurrence as client-go's recorder does", "[api]") {
  const Time now = ParseTime("2026-11-30T04:00:00Z").value();
  const Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u1"}, {"resourceVersion", "7"}}}};
  const Json event = MakeEvent(ObjectReferenceOf(pod), "Normal", "Pulled", "Image is present",
                               {"kubelet", "n1"}, now);
  CHECK(event["apiVersion"] == "v1");
  CHECK(event["kind"] == "Event");
  CHECK(event["metadata"]["name"].get<std::string>().rfind("p.", 0) == 0);
  CHECK(event["metadata"]["namespace"] == "ns");
  CHECK(event["metadata"].size() == 2);
  CHECK(event["involvedObject"] == Json{{"apiVersion", "v1"},
                                        {"kind", "Pod"},
                                        {"name", "p"},
                                        {"namespace", "ns"},
                                        {"uid", "u1"},
                                        {"resourceVersion", "7"}});
  CHECK(event["type"] == "Normal");
  CHECK(event["reason"] == "Pulled");
  CHECK(event["message"] == "Image is present");
  CHECK(event["source"] == Json{{"component", "kubelet"}, {"host", "n1"}});
  CHECK(event["reportingComponent"] == "kubelet");
  CHECK(event["reportingInstance"] == "n1");
  CHECK(event["firstTimestamp"] == "2026-11-30T04:00:00Z");
  CHECK(event["lastTimestamp"] == "2026-11-30T04:00:00Z");
  CHECK(event["eventTime"].is_null());
  CHECK(event["count"] == 1);
  CHECK(event.size() == 14);
  // A component with no node (a controller) names no host.
  const Json controller = MakeEvent(ObjectReferenceOf(pod), "Warning", "Failed", "m",
                                    {"pytorchjob-controller", ""}, now);
  CHECK(controller["source"] == Json{{"component", "pytorchjob-controller"}});
  CHECK(controller["reportingInstance"] == "");
  CHECK(controller["metadata"]["name"] != event["metadata"]["name"]);  // same nanosecond
}

}  // namespace
}  // namespace pjemu::api
