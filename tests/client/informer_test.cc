// Given a Store behind a FlakyClient that drops watches, answers 410 and fails List and Watch
// calls, an Informer's consumer should always end with exactly the store's objects, told
// through well-formed events (ADDED for the new, MODIFIED and DELETED for the known), with
// retries backing off to a cap and every relist and error counted and logged. Virtual time.
#include "emulator/client/informer.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "emulator/client/local_client.h"
#include "emulator/store/store.h"
#include "tests/client/flaky_client.h"

namespace pjemu::client {
namespace {

using Type = api::WatchEvent::Type;

Json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

std::string KeyOf(const Json& object) {
  const Json& meta = object["metadata"];
  return meta.value("namespace", "") + "/" + meta.value("name", "");
}

// What a consumer learns from the events: namespace/name -> resourceVersion, plus every event
// that contradicts what it was told before (ADDED for a known key, MODIFIED or DELETED for an
// unknown one).
struct Mirror {
  std::map<std::string, std::string> objects;
  std::vector<std::string> events;  // "ADDED default/a"
  std::vector<std::string> contradictions;

  void operator()(const api::WatchEvent& e) {
    const std::string key = KeyOf(e.object());
    const bool known = objects.count(key) > 0;
    const std::string line = std::string(api::WatchTypeName(e.type)) + " " + key;
    events.push_back(line);
    if ((e.type == Type::kAdded) == known) contradictions.push_back(line);
    if (e.type == Type::kDeleted) {
      objects.erase(key);
    } else {
      objects[key] = e.object()["metadata"].value("resourceVersion", "");
    }
  }
};

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<Client> local = MakeLocalClient(store);
  testing::FlakyClient flaky{*local, clock, 7};
  Mirror mirror;
  std::ostringstream log;
  InformerOptions options = [this] {
    InformerOptions o;
    o.name = "test pods";
    o.logger = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
    return o;
  }();
  std::unique_ptr<Informer> informer;

  Informer& Start() {
    informer = std::make_unique<Informer>(flaky, loop, api::Pods(), options,
                                          [this](const api::WatchEvent& e) { mirror(e); });
    REQUIRE(informer->Start().ok());
    loop.RunUntilIdle();
    return *informer;
  }
  Json Create(const std::string& name) {
    auto r = local->Create(api::Pods(), "default", Pod(name));
    REQUIRE(r.ok());
    return *r;
  }
  void Label(const std::string& name, const std::string& value) {
    Json patch = {{"metadata", {{"labels", {{"v", value}}}}}};
    REQUIRE(local->Patch(api::Pods(), "default", name, api::PatchType::kMerge, patch).ok());
  }
  void Delete(const std::string& name) {
    REQUIRE(local->Delete(api::Pods(), "default", name).ok());
  }
  std::map<std::string, std::string> Stored() {
    std::map<std::string, std::string> out;
    const Json list = *local->List(api::Pods(), "");
    for (const Json& p : list["items"]) {
      out[KeyOf(p)] = p["metadata"]["resourceVersion"];
    }
    return out;
  }
  std::size_t LogLines() {
    std::string text = log.str();
    return std::count(text.begin(), text.end(), '\n');
  }
};

TEST_CASE("an informer lists, then watches from the list's resourceVersion", "[client][informer]") {
  Fixture f;
  f.Create("b");
  f.Create("a");
  Informer& informer = f.Start();
  // ADDED for the listed items in list order (by name), from one drain posted by Start.
  CHECK(f.mirror.events == std::vector<std::string>{"ADDED default/a", "ADDED default/b"});
  CHECK(f.flaky.lists == 1);
  REQUIRE(f.flaky.watch_rvs.size() == 1);
  CHECK(f.flaky.watch_rvs[0] == std::to_string(f.store.ResourceVersion()));
  f.Label("a", "1");
  f.Delete("b");
  f.Create("c");
  f.loop.RunUntilIdle();
  CHECK(f.mirror.events == std::vector<std::string>{"ADDED default/a", "ADDED default/b",
                                                    "MODIFIED default/a", "DELETED default/b",
                                                    "ADDED default/c"});
  CHECK(f.mirror.objects == f.Stored());
  CHECK(informer.resource_version() == std::to_string(f.store.ResourceVersion()));
  CHECK(informer.size() == 2);
  CHECK(informer.relists() == 0);
  CHECK(informer.errors() == 0);
  CHECK(f.LogLines() == 0);
}

TEST_CASE("Drain delivers queued events at once, a drain posted meanwhile finds none",
          "[client][informer]") {
  Fixture f;
  f.Create("a");
  Informer informer(f.flaky, f.loop, api::Pods(), f.options,
                    [&](const api::WatchEvent& e) { f.mirror(e); });
  REQUIRE(informer.Start().ok());
  CHECK(informer.Drain() == 1);
  f.Create("b");
  CHECK(informer.Drain() == 1);
  // One drain was posted (Start's; the notification found it pending): nothing is left for it.
  CHECK(f.loop.RunUntilIdle() == 1);
  CHECK(f.mirror.events == std::vector<std::string>{"ADDED default/a", "ADDED default/b"});
}

TEST_CASE("a dropped watch is resumed from the last resourceVersion, not relisted",
          "[client][informer]") {
  Fixture f;
  f.Create("a");
  Informer& informer = f.Start();
  f.Label("a", "1");
  f.loop.RunUntilIdle();
  const std::string last = informer.resource_version();
  f.flaky.DropWatches();
  f.Create("b");  // while the stream is down
  f.loop.RunUntilIdle();
  CHECK(f.flaky.watch_rvs.back() == last);
  CHECK(f.flaky.lists == 1);
  CHECK(informer.relists() == 0);
  CHECK(f.mirror.objects == f.Stored());
  CHECK(f.mirror.contradictions.empty());
}

TEST_CASE("an Expired resume and an ERROR 410 event both relist at once", "[client][informer]") {
  Fixture f;
  f.Create("gone");
  f.Create("replaced");
  f.Create("kept");
  Informer& informer = f.Start();
  f.Delete("gone");
  f.Delete("replaced");
  f.Create("replaced");  // same name, new uid
  f.Create("new");
  SECTION("the resuming Watch call answers kExpired") {
    f.flaky.compacted_rv = std::stoull(informer.resource_version());
    f.flaky.DropWatches();
  }
  SECTION("the stream ends with an ERROR 410 (the changes before it lost)") {
    f.flaky.BreakWatches(Code::kExpired);
  }
  f.mirror.events.clear();
  f.loop.RunUntilIdle();
  CHECK(informer.relists() == 1);
  CHECK(informer.errors() == 0);
  CHECK(f.flaky.lists == 2);
  // The vanished and the replaced first, then the list in order: MODIFIED for what the
  // consumer knew, ADDED for what is new to it.
  CHECK(f.mirror.events == std::vector<std::string>{"DELETED default/gone",
                                                    "DELETED default/replaced",
                                                    "MODIFIED default/kept", "ADDED default/new",
                                                    "ADDED default/replaced"});
  CHECK(f.mirror.objects == f.Stored());
  CHECK(f.mirror.contradictions.empty());
  CHECK(f.LogLines() == 1);
  CHECK_THAT(f.log.str(), Catch::Contains("test pods: relisting pods"));
}

TEST_CASE("a relist's DELETED carries the last known identity", "[client][informer]") {
  Fixture f;
  Json pod = Pod("owned");
  pod["metadata"]["ownerReferences"] = {
      {{"apiVersion", "v1"}, {"kind", "Thing"}, {"name", "t"}, {"uid", "t-uid"}}};
  Json created = *f.local->Create(api::Pods(), "default", pod);
  std::vector<Json> deleted;
  Informer informer(f.flaky, f.loop, api::Pods(), f.options, [&](const api::WatchEvent& e) {
    if (e.type == Type::kDeleted) deleted.push_back(e.object());
  });
  REQUIRE(informer.Start().ok());
  f.loop.RunUntilIdle();
  f.Label("owned", "changed");
  f.loop.RunUntilIdle();
  f.flaky.BreakWatches(Code::kExpired);
  f.Delete("owned");
  f.loop.RunUntilIdle();
  REQUIRE(deleted.size() == 1);
  const Json& meta = deleted[0]["metadata"];
  CHECK(deleted[0]["kind"] == "Pod");
  CHECK(deleted[0]["apiVersion"] == "v1");
  CHECK(meta["name"] == "owned");
  CHECK(meta["namespace"] == "default");
  CHECK(meta["uid"] == created["metadata"]["uid"]);
  CHECK(meta["resourceVersion"] != created["metadata"]["resourceVersion"]);  // the label's
  CHECK(meta["ownerReferences"] == pod["metadata"]["ownerReferences"]);
}

TEST_CASE("a relist's DELETEDs carry each object's own owners, shared or changed",
          "[client][informer]") {
  Fixture f;
  auto owners = [](const std::string& uid) {
    return Json::array({{{"apiVersion", "v1"}, {"kind", "Thing"}, {"name", uid}, {"uid", uid}}});
  };
  auto set_owners = [&](const std::string& name, const Json& refs) {
    Json patch = {{"metadata", {{"ownerReferences", refs}}}};
    REQUIRE(f.local->Patch(api::Pods(), "default", name, api::PatchType::kMerge, patch).ok());
  };
  for (const char* name : {"a", "b", "c", "d"}) f.Create(name);
  set_owners("a", owners("x"));
  set_owners("b", owners("y"));
  set_owners("c", owners("x"));
  std::map<std::string, Json> deleted;
  Informer informer(f.flaky, f.loop, api::Pods(), f.options, [&](const api::WatchEvent& e) {
    if (e.type == Type::kDeleted) deleted[e.object()["metadata"]["name"]] = e.object();
  });
  REQUIRE(informer.Start().ok());
  f.loop.RunUntilIdle();
  set_owners("a", owners("y"));  // moves from x's shared text to y's
  set_owners("c", nullptr);      // loses its owners
  set_owners("d", owners("z"));  // gains some
  f.loop.RunUntilIdle();
  f.flaky.BreakWatches(Code::kExpired);
  for (const char* name : {"a", "b", "c", "d"}) f.Delete(name);
  f.loop.RunUntilIdle();
  REQUIRE(deleted.size() == 4);
  CHECK(deleted["a"]["metadata"]["ownerReferences"] == owners("y"));
  CHECK(deleted["b"]["metadata"]["ownerReferences"] == owners("y"));
  CHECK_FALSE(deleted["c"]["metadata"].contains("ownerReferences"));
  CHECK(deleted["d"]["metadata"]["ownerReferences"] == owners("z"));
}

TEST_CASE("a broken stream relists after the backoff", "[client][informer]") {
  Fixture f;
  f.Create("a");
  Informer& informer = f.Start();
  f.flaky.BreakWatches(Code::kInternal);
  f.Create("b");
  f.loop.RunUntilIdle();
  CHECK(informer.errors() == 1);
  CHECK(f.flaky.lists == 1);
  CHECK(f.mirror.objects != f.Stored());
  f.loop.RunFor(1s);
  CHECK(f.flaky.lists == 2);
  CHECK(informer.relists() == 1);
  CHECK(f.mirror.objects == f.Stored());
  CHECK(f.LogLines() == 2);  // the error, then the relist
}

TEST_CASE(
    "failing List and Watch calls are retried with a capped exponential backoff, and the "
    "consumer is never left deaf",
    "[client][informer]") {
  Fixture f;
  f.options.initial_backoff = 1s;
  f.options.max_backoff = 8s;
  f.Create("a");
  Informer& informer = f.Start();
  const Time t0 = f.clock.Now();
  f.flaky.down = true;
  f.flaky.DropWatches();  // the resume fails, then every relist
  f.Create("while-down");
  f.loop.RunFor(40s);
  std::vector<Duration> at;
  for (Time t : f.flaky.failure_times) at.push_back(t - t0);
  CHECK(at == std::vector<Duration>{0s, 1s, 3s, 7s, 15s, 23s, 31s, 39s});
  CHECK(informer.errors() == 8);
  CHECK(informer.relists() == 7);
  CHECK(informer.backoff() == 8s);
  CHECK(f.LogLines() == 15);
  CHECK(f.mirror.objects != f.Stored());
  f.flaky.down = false;  // the API is back: the next retry (at 47 s) recovers
  f.loop.RunFor(10s);
  CHECK(f.mirror.objects == f.Stored());
  f.Create("after");
  f.loop.RunUntilIdle();
  CHECK(f.mirror.objects.count("default/after") == 1);
  CHECK(f.mirror.contradictions.empty());
  CHECK(informer.backoff() == 1s);
  CHECK(f.flaky.open_watches() == 1);
}

TEST_CASE("a resume that expires right after a relist backs off instead of spinning",
          "[client][informer]") {
  Fixture f;
  f.Create("a");
  Informer& informer = f.Start();
  f.flaky.compacted_rv = 1'000'000;  // every watch from a resourceVersion expires
  f.flaky.DropWatches();
  f.loop.RunUntilIdle();
  CHECK(informer.relists() == 1);
  CHECK(informer.errors() == 1);  // the watch from the fresh list's resourceVersion
  f.loop.RunFor(1s);
  CHECK(informer.relists() == 2);
  CHECK(informer.errors() == 2);
  f.flaky.compacted_rv = 0;
  f.Create("b");
  f.loop.RunFor(2s);
  CHECK(f.mirror.objects == f.Stored());
}

TEST_CASE("streams that end as soon as they open are retried with a backoff, not in a loop",
          "[client][informer]") {
  Fixture f;
  Informer& informer = f.Start();
  f.flaky.end_at_once = true;
  f.flaky.DropWatches();
  f.loop.RunUntilIdle();
  CHECK(f.flaky.watches == 2);  // Start's, then the resume, which ended at once: an error
  CHECK(informer.errors() == 1);
  f.loop.RunFor(10s);
  CHECK(informer.errors() > 1);
  CHECK(f.flaky.watches < 40);
  f.flaky.end_at_once = false;
  f.Create("a");
  f.loop.RunFor(2s);
  CHECK(f.mirror.objects == f.Stored());
}

TEST_CASE("Start fails with the first error and does not retry", "[client][informer]") {
  Fixture f;
  f.flaky.down = true;
  std::vector<std::string> errors;
  f.options.on_error = [&](InformerStep step, const Status& s) {
    errors.push_back(std::string(InformerStepName(step)) + ": " + s.message());
  };
  Informer informer(f.flaky, f.loop, api::Pods(), f.options, [](const api::WatchEvent&) {});
  Status s = informer.Start();
  CHECK(s.code() == Code::kUnavailable);
  CHECK(s.message() == "list pods: injected list failure");
  CHECK(errors == std::vector<std::string>{"list: injected list failure"});
  CHECK_FALSE(informer.running());
  f.loop.RunFor(1min);
  CHECK(f.flaky.lists == 1);
  CHECK(f.flaky.watches == 0);
  f.flaky.down = false;
  CHECK(informer.Start().ok());
}

TEST_CASE("the handler may stop or destroy the informer mid-drain", "[client][informer]") {
  Fixture f;
  for (const char* name : {"a", "b", "c"}) f.Create(name);
  int seen = 0;
  SECTION("stop") {
    Informer informer(f.flaky, f.loop, api::Pods(), f.options, [&](const api::WatchEvent&) {
      ++seen;
      informer.Stop();
    });
    REQUIRE(informer.Start().ok());
    CHECK(informer.Drain() == 1);
    f.loop.RunUntilIdle();
    CHECK_FALSE(informer.running());
  }
  SECTION("destroy") {
    std::unique_ptr<Informer> informer;
    informer = std::make_unique<Informer>(f.flaky, f.loop, api::Pods(), f.options,
                                          [&](const api::WatchEvent&) {
                                            ++seen;
                                            informer.reset();
                                          });
    REQUIRE(informer->Start().ok());
    f.loop.RunUntilIdle();
    CHECK(informer == nullptr);
  }
  CHECK(seen == 1);
}

TEST_CASE("under seeded drops, 410s and failing calls the consumer converges on the store",
          "[client][informer]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    Fixture f;
    Random random(seed);
    Informer& informer = f.Start();
    f.flaky.fail_rate = 0.25;
    std::vector<std::string> names;
    for (int step = 0; step < 400; ++step) {
      switch (random.Uniform(10)) {
        case 0:
        case 1:
        case 2:
        case 3:
          names.push_back("p" + std::to_string(step));
          f.Create(names.back());
          break;
        case 4:
        case 5:
          if (!names.empty()) f.Label(names[random.Uniform(names.size())], std::to_string(step));
          break;
        case 6:
        case 7:
          if (!names.empty()) {
            std::size_t i = random.Uniform(names.size());
            f.Delete(names[i]);
            names.erase(names.begin() + i);
          }
          break;
        case 8:
          f.flaky.DropWatches();
          break;
        case 9:
          if (random.Uniform(2)) {
            f.flaky.BreakWatches(random.Uniform(2) ? Code::kExpired : Code::kInternal);
          } else {
            f.flaky.compacted_rv = f.store.ResourceVersion();
          }
          break;
      }
      f.loop.RunFor(std::chrono::milliseconds(random.Uniform(3000)));
    }
    f.flaky.fail_rate = 0;
    f.flaky.compacted_rv = 0;
    f.loop.RunFor(1min);
    INFO("seed " << seed);
    CHECK(f.mirror.objects == f.Stored());
    CHECK(f.mirror.contradictions.empty());
    CHECK(informer.relists() > 0);
    CHECK(informer.errors() > 0);
    CHECK(f.LogLines() == static_cast<std::size_t>(informer.relists() + informer.errors()));
    CHECK(f.flaky.open_watches() == 1);
  }
}

}  // namespace
}  // namespace pjemu::client
