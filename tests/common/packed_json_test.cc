// Given any JSON value, ToMsgpack should write what nlohmann's encoder writes, and PackJson should
// give bytes that UnpackJson turns back into an equal value, smaller than the value's text when it
// repeats itself, as a stored object does; and once enough objects of one kind were packed, later
// ones pack smaller again (a dictionary), while every value packed before or after, of that kind or
// another, still unpacks equal.
#include "emulator/common/packed_json.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

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

TEST_CASE("values larger than a thread's decoding buffer unpack equal, before and after small ones",
          "[common]") {
  // 64 KiB of MessagePack is what a thread keeps for decoding; these go past it and around it.
  for (std::size_t bytes : {std::size_t{10}, std::size_t{65'000}, std::size_t{65'536},
                            std::size_t{70'000}, std::size_t{1'000'000}, std::size_t{12}}) {
    INFO(bytes << " bytes of text");
    Json value = {{"kind", "Blob"}, {"text", std::string(bytes, 'x')}, {"n", bytes}};
    value["list"] = Json::array({std::string(bytes / 2, 'y'), -1, 2.5});
    CHECK(UnpackJson(PackJson(value), "a large value") == value);
  }
}

TEST_CASE("packed numbers, strings, lists and nesting come back as nlohmann's reader gives them",
          "[common]") {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
  const std::int64_t low = std::numeric_limits<std::int64_t>::min();
  Json value = {{"unsigned", {0, 127, 128, 255, 256, 65535, 65536, 4294967295u, 4294967296u, big}},
                {"signed", {-1, -32, -33, -128, -129, -32768, -32769, -2147483649LL, low}},
                {"float", {0.5, 0.1, -2.25, 1e300}},
                {"text",
                 {std::string(31, 'a'), std::string(32, 'b'), std::string(256, 'c'),
                  std::string(70000, 'd')}},
                {"list", Json::array()},
                {"map", Json::object()}};
  for (int i = 0; i < 70000; ++i) value["list"].push_back(i % 3 ? Json(i) : Json("x"));
  for (int i = 0; i < 20; ++i) value["map"]["k" + std::to_string(i)] = i;
  // Written byte for byte as nlohmann's encoder writes it, signed non-negatives and float 32s too.
  Json more = value;
  more["signed"].push_back(std::int64_t{5});
  more["signed"].push_back(std::int64_t{300});
  more["float"].push_back(3.0e38);
  more["float"].push_back(-0.0);
  more["float"].push_back(std::numeric_limits<double>::infinity());
  more["map"]["nested"] = {{"a", {nullptr, true, false, Json::array({Json::object()})}}};
  CHECK(ToMsgpack(more) == Json::to_msgpack(more));
  const Json back = UnpackJson(PackJson(value), "a test value");
  const Json expected = Json::from_msgpack(Json::to_msgpack(value));
  CHECK(back == value);
  CHECK(back.dump() == expected.dump());
  CHECK(back["unsigned"][0].is_number_unsigned());
  CHECK(back["unsigned"][9].get<std::uint64_t>() == big);
  CHECK(back["signed"][8].is_number_integer());
  CHECK(back["signed"][8].get<std::int64_t>() == low);
  CHECK(back["float"][1].is_number_float());
  CHECK(back["list"].size() == 70000);
  Json deep = 1;  // deeper than the fast reader goes: read by nlohmann's
  for (int i = 0; i < 300; ++i) deep = Json::array({deep, {{"level", i}}});
  CHECK(UnpackJson(PackJson(deep), "a deep value") == deep);
}

// An Event-like object of a kind no other test packs (the dictionaries are the process's).
Json Sample(const std::string& kind, int i) {
  return {{"apiVersion", "test.pjemu.dev/v1"},
          {"kind", kind},
          {"metadata",
           {{"name", "job-" + std::to_string(i) + "-worker-0.17a2" + std::to_string(i * 7919)},
            {"namespace", "default"},
            {"uid", "5f0c1d2e-" + std::to_string(100000 + i) + "-4c7d-9a1b-0e6f2d3c4b5a"},
            {"resourceVersion", std::to_string(1000 + i)},
            {"creationTimestamp", "2026-11-29T15:00:00Z"},
            {"managedFields",
             {{{"manager", "kubelet"},
               {"operation", "Update"},
               {"apiVersion", "v1"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1", R"({"f:count":{},"f:firstTimestamp":{},"f:involvedObject":{}})"}}}}}},
          {"involvedObject",
           {{"kind", "Pod"},
            {"name", "job-" + std::to_string(i) + "-worker-0"},
            {"namespace", "default"}}},
          {"reason", i % 2 ? "Started" : "Created"},
          {"message", "Started container pytorch"},
          {"source", {{"component", "kubelet"}, {"host", "pjemu-node"}}},
          {"count", 1},
          {"type", "Normal"}};
}

TEST_CASE("objects of a kind pack smaller once its dictionary is trained", "[common]") {
  std::vector<std::string> early;
  for (int i = 0; i < 300; ++i) early.push_back(PackJson(Sample("PackTestEvent", i)));
  const std::string later = PackJson(Sample("PackTestEvent", 1000));
  const std::string other = PackJson(Sample("PackTestOther", 1000));  // its kind is learning
  INFO("first " << early.front().size() << " B, later " << later.size() << " B, other kind "
                << other.size() << " B");
  CHECK(later.size() * 2 < early.front().size());
  CHECK(other.size() * 10 > early.front().size() * 9);
  CHECK(UnpackJson(later, "a later value") == Sample("PackTestEvent", 1000));
  CHECK(UnpackJson(other, "a value of another kind") == Sample("PackTestOther", 1000));
  for (int i = 0; i < 300; i += 37) {
    CHECK(UnpackJson(early[i], "an early value") == Sample("PackTestEvent", i));
  }
  // A value of the kind that is no object's (no kind, or not strings) packs without one.
  Json plain = Sample("PackTestEvent", 5);
  plain["kind"] = 3;
  CHECK(UnpackJson(PackJson(plain), "a value with a numeric kind") == plain);
}

TEST_CASE("values of one kind pack and unpack on several threads at once", "[common]") {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < 200; ++i) {
        Json v = Sample("PackTestThreaded", t * 1000 + i);
        if (UnpackJson(PackJson(v), "a threaded value") != v) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("UnpackShared gives the tree its bytes last decoded to while it is held", "[common]") {
  const Json v = Sample("PackTestShared", 7);
  // Two holders packing one version apart get the same bytes.
  const std::string a = PackJson(v), b = PackJson(v);
  REQUIRE(a == b);
  std::shared_ptr<const Json> first = UnpackShared(a, "a shared value");
  CHECK(*first == v);
  CHECK(UnpackShared(b, "the same bytes") == first);  // shared, not decoded again
  // Other bytes are another tree.
  std::shared_ptr<const Json> other =
      UnpackShared(PackJson(Sample("PackTestShared", 8)), "other bytes");
  CHECK(other != first);
  CHECK(*other == Sample("PackTestShared", 8));
  // Once no one holds it, the same bytes decode to a new, equal tree.
  const Json* const address = first.get();
  first.reset();
  std::shared_ptr<const Json> again = UnpackShared(a, "the bytes again");
  CHECK(*again == v);
  (void)address;  // the allocator may reuse it: only the value is promised
}

TEST_CASE("UnpackShared from several threads at once", "[common]") {
  std::vector<std::string> packed;
  for (int i = 0; i < 50; ++i) packed.push_back(PackJson(Sample("PackTestSharedThreaded", i)));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&packed, &wrong] {
      for (int round = 0; round < 20; ++round) {
        for (std::size_t i = 0; i < packed.size(); ++i) {
          auto tree = UnpackShared(packed[i], "a value read by many threads");
          if (*tree != Sample("PackTestSharedThreaded", static_cast<int>(i))) ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace pjemu
