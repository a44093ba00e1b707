// Given any JSON value, PackJson should give bytes that UnpackJson turns back into an equal
// value, smaller than the value's text when it repeats itself, as a stored object does.
#include "emulator/common/packed_json.h"

#include <catch2/catch.hpp>

namespace pjemu {
namespace {

TEST_CASE("a packed value unpacks to an equal value", "[common]") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}, {"generation", 2}}},
              {"spec", {{"containers", Json::array()}, {"priority", -3}, {"ratio", 0.5}}},
              {"status", {{"ready", true}, {"message", "ünïcode ✓"}, {"gone", nullptr}}}};
  for (int i = 0; i < 50; ++i) {
    pod["spec"]["containers"].push_back({{"name", "c" + std::to_string(i)}, {"image", "busybox"}});
  }
  std::string packed = PackJson(pod);
  REQUIRE(!packed.empty());
  CHECK(packed.size() < pod.dump().size() / 3);
  CHECK(UnpackJson(packed, "a test pod") == pod);
  for (const Json& v : {Json(), Json(7), Json("text"), Json::array(), Json::object()}) {
    CHECK(UnpackJson(PackJson(v), "a test value") == v);
  }
}

}  // namespace
}  // namespace pjemu
