// Watches and pod logs through the Router: NDJSON lines, Table events, 410 for expired versions,
// the watch-list protocol, timeoutSeconds, and the log options read from CRI files.
#include <catch2/catch.hpp>
#include <set>

#include "tests/apiserver/router_fixture.h"

namespace pjemu::apiserver {
namespace {

using testing::JobJson;
using testing::kTableAccept;
using testing::PodJson;
using testing::RouterFixture;

const std::string kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
const std::string kPods = "/api/v1/namespaces/default/pods";

TEST_CASE("a watch from the listed version streams later changes as compact lines", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("a").dump()).status == 201);
  std::string rv = RouterFixture::Body(f.Do("GET", kJobs))["metadata"]["resourceVersion"];
  auto watch = f.Do("GET", kJobs + "?resourceVersion=" + rv + "&watch=True&timeoutSeconds=300");
  REQUIRE(watch.status == 200);
  REQUIRE(watch.stream);
  CHECK(watch.stream->IsWatch());
  CHECK(watch.stream->Timeout() == std::optional<Duration>(std::chrono::seconds(300)));
  CHECK(RouterFixture::Lines(*watch.stream).empty());

  REQUIRE(f.Do("POST", kJobs, JobJson("b").dump()).status == 201);
  REQUIRE(f.Do("DELETE", kJobs + "/a").status == 200);
  std::string raw;
  watch.stream->Poll(&raw);
  REQUIRE_FALSE(raw.empty());
  CHECK(raw.back() == '\n');
  CHECK(raw.find("  ") == std::string::npos);  // compact
  std::vector<Json> lines;
  for (std::size_t s = 0, nl; (nl = raw.find('\n', s)) != std::string::npos; s = nl + 1) {
    lines.push_back(Json::parse(raw.substr(s, nl - s)));
  }
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["type"] == "ADDED");
  CHECK(lines[0]["object"]["metadata"]["name"] == "b");
  CHECK(lines[1]["type"] == "DELETED");
  CHECK(lines[1]["object"]["metadata"]["name"] == "a");
  watch.stream->Stop();
}

TEST_CASE("a watch without a version replays the current objects as ADDED", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("a").dump()).status == 201);
  auto watch = f.Do("GET", kJobs + "?watch=1");
  REQUIRE(watch.stream);
  auto lines = RouterFixture::Lines(*watch.stream);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["type"] == "ADDED");
  CHECK(f.Do("GET", kJobs + "?watch=maybe").status == 400);
}

TEST_CASE("watch selectors filter events", "[apiserver]") {
  RouterFixture f;
  auto watch = f.Do("GET", kJobs + "?watch=true&fieldSelector=metadata.name%3Db&resourceVersion=" +
                               std::to_string(f.store.ResourceVersion()));
  REQUIRE(watch.stream);
  REQUIRE(f.Do("POST", kJobs, JobJson("a").dump()).status == 201);
  REQUIRE(f.Do("POST", kJobs, JobJson("b").dump()).status == 201);
  auto lines = RouterFixture::Lines(*watch.stream);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["object"]["metadata"]["name"] == "b");
}

TEST_CASE("a watch from an expired version gets one ERROR 410 event, then ends", "[apiserver]") {
  FakeClock clock;
  store::StoreOptions options;
  options.watch_history = 2;
  store::Store store(clock, options);
  Router router(store, nullptr, RouterOptions{"", "v1.30.0", &clock, {}});
  for (int i = 0; i < 10; ++i) {
    HttpRequest create{"POST", kJobs, {}, JobJson("j" + std::to_string(i)).dump()};
    REQUIRE(router.Route(create).status == 201);
  }
  HttpRequest watch_request{"GET", kJobs + "?watch=true&resourceVersion=1", {}, ""};
  auto watch = router.Route(watch_request);
  REQUIRE(watch.status == 200);
  REQUIRE(watch.stream);
  bool ended = false;
  auto lines = RouterFixture::Lines(*watch.stream, &ended);
  CHECK(ended);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["type"] == "ERROR");
  CHECK(lines[0]["object"]["code"] == 410);
  CHECK(lines[0]["object"]["reason"] == "Expired");
  CHECK(lines[0]["object"]["message"].get<std::string>().rfind("too old resource version: 1", 0) ==
        0);
}

TEST_CASE("Table watch events carry column definitions in the first event only", "[apiserver]") {
  RouterFixture f;
  std::string rv = std::to_string(f.store.ResourceVersion());
  auto watch =
      f.Do("GET", kJobs + "?resourceVersion=" + rv + "&watch=true", "", {{"accept", kTableAccept}});
  REQUIRE(watch.stream);
  REQUIRE(f.Do("POST", kJobs, JobJson("a").dump()).status == 201);
  REQUIRE(f.Do("PATCH", kJobs + "/a/status",
               R"({"status":{"conditions":[{"type":"Created","status":"True"}]}})",
               {{"content-type", "application/merge-patch+json"}})
              .status == 200);
  auto lines = RouterFixture::Lines(*watch.stream);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["object"]["kind"] == "Table");
  CHECK(lines[0]["object"]["columnDefinitions"].size() == 3);
  CHECK(lines[1]["object"]["columnDefinitions"].empty());
  CHECK(lines[1]["object"]["rows"][0]["cells"][1] == "Created");
}

TEST_CASE("sendInitialEvents streams the state, an initial-events-end bookmark, then changes",
          "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("a").dump()).status == 201);
  CHECK(f.Do("GET", kJobs + "?watch=true&sendInitialEvents=true").status == 422);
  auto watch = f.Do("GET", kJobs +
                               "?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
                               "&sendInitialEvents=true&timeoutSeconds=30&watch=true");
  REQUIRE(watch.stream);
  auto lines = RouterFixture::Lines(*watch.stream);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["type"] == "ADDED");
  CHECK(lines[1]["type"] == "BOOKMARK");
  CHECK(lines[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true");
  REQUIRE(f.Do("POST", kJobs, JobJson("b").dump()).status == 201);
  auto later = RouterFixture::Lines(*watch.stream);
  REQUIRE(later.size() == 1);
  CHECK(later[0]["object"]["metadata"]["name"] == "b");
}

TEST_CASE("pod logs honour tailLines, timestamps, limitBytes, sinceTime and previous",
          "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kPods, PodJson("mnist-master-0").dump()).status == 201);
  std::string path = f.WriteLog("master.log",
                                "2024-01-01T00:00:01.000000001Z stdout F epoch 1\n"
                                "2024-01-01T00:00:02.000000002Z stderr P part-\n"
                                "2024-01-01T00:00:02.500000000Z stderr F ial\n"
                                "2024-01-01T00:00:03.000000003Z stdout F epoch 3\n");
  f.logs.Set("default", "mnist-master-0", path, false);
  const std::string log = kPods + "/mnist-master-0/log";

  auto all = f.Do("GET", log);
  CHECK(all.status == 200);
  CHECK(all.content_type == "text/plain");
  CHECK(all.body == "epoch 1\npart-ial\nepoch 3\n");
  CHECK(f.Do("GET", log + "?container=pytorch&tailLines=2").body == "part-ial\nepoch 3\n");
  CHECK(f.Do("GET", log + "?tailLines=0").body == "");
  CHECK(f.Do("GET", log + "?timestamps=true&tailLines=1").body ==
        "2024-01-01T00:00:03.000000003Z epoch 3\n");
  CHECK(f.Do("GET", log + "?limitBytes=10").body == "epoch 1\npa");
  CHECK(f.Do("GET", log + "?sinceTime=2024-01-01T00:00:02.6Z").body == "epoch 3\n");
  f.clock.Set(Time(std::chrono::seconds(FakeClock::kEpochSeconds + 2)) + 100ms);
  CHECK(f.Do("GET", log + "?sinceSeconds=1").body == "part-ial\nepoch 3\n");

  CHECK(f.Do("GET", log + "?tailLines=-1").status == 422);
  CHECK(f.Do("GET", log + "?limitBytes=0").status == 422);
  CHECK(f.Do("GET", log + "?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z").status == 422);
  CHECK(f.Do("GET", log + "?sinceTime=yesterday").status == 400);
  auto missing = f.Do("GET", kPods + "/nosuch/log");
  CHECK(missing.status == 404);
  CHECK(RouterFixture::Body(missing)["message"] == "pods \"nosuch\" not found");
  REQUIRE(f.Do("POST", kPods, PodJson("waiting").dump()).status == 201);
  auto waiting = f.Do("GET", kPods + "/waiting/log");
  CHECK(waiting.status == 400);
  CHECK(RouterFixture::Body(waiting)["message"] ==
        "container \"pytorch\" in pod \"waiting\" is waiting to start: ContainerCreating");
}

TEST_CASE("a log follow streams appended lines and ends when the container stops", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kPods, PodJson("p").dump()).status == 201);
  std::string path = f.WriteLog("p.log", "2024-01-01T00:00:01Z stdout F one\n");
  f.logs.Set("default", "p", path, true);
  auto follow = f.Do("GET", kPods + "/p/log?follow=True");
  REQUIRE(follow.stream);
  CHECK_FALSE(follow.stream->IsWatch());
  std::string out;
  CHECK(follow.stream->Poll(&out));
  CHECK(out == "one\n");
  f.WriteLog("p.log", "2024-01-01T00:00:02Z stdout F two\n2024-01-01T00:00:03Z stdout P thr");
  out.clear();
  CHECK(follow.stream->Poll(&out));
  CHECK(out == "two\n");
  f.WriteLog("p.log", "ee\n");  // the partial (P) entry is now complete in the file
  f.logs.Set("default", "p", path, false);
  out.clear();
  CHECK_FALSE(follow.stream->Poll(&out));
  CHECK(out == "three");  // a P entry carries no newline of its own
}

TEST_CASE("a log follow ends when the pod is deleted", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kPods, PodJson("p").dump()).status == 201);
  std::string path = f.WriteLog("p.log", "2024-01-01T00:00:01Z stdout F one\n");
  f.logs.Set("default", "p", path, true);
  auto follow = f.Do("GET", kPods + "/p/log?follow=true");
  REQUIRE(follow.stream);
  std::string out;
  CHECK(follow.stream->Poll(&out));
  REQUIRE(f.Do("DELETE", kPods + "/p?gracePeriodSeconds=0").status == 200);
  out.clear();
  CHECK_FALSE(follow.stream->Poll(&out));
}

}  // namespace
}  // namespace pjemu::apiserver

namespace pjemu::apiserver {
namespace {

TEST_CASE("a watch without timeoutSeconds ends after min-request-timeout times between 1 and 2",
          "[apiserver][watch]") {
  FakeClock clock;
  store::Store store(clock);
  RouterOptions options{"", "v1.30.0", &clock, {}};
  options.min_request_timeout = std::chrono::seconds(10);
  options.seed = 7;
  Router router(store, nullptr, options);
  auto watch = [&](const std::string& query) {
    HttpRequest request{"GET", "/api/v1/pods?watch=true" + query, {}, ""};
    HttpResponse response = router.Route(request);
    REQUIRE(response.stream);
    auto timeout = response.stream->Timeout();
    response.stream->Stop();
    return timeout;
  };
  std::set<Duration::rep> seen;
  for (int i = 0; i < 20; ++i) {
    auto timeout = watch("");
    REQUIRE(timeout);
    CHECK(*timeout >= std::chrono::seconds(10));
    CHECK(*timeout < std::chrono::seconds(20));
    seen.insert(timeout->count());
  }
  CHECK(seen.size() > 10);  // spread, not one value
  CHECK(*watch("&timeoutSeconds=5") == std::chrono::seconds(5));

  options.min_request_timeout = Duration::zero();
  Router forever(store, nullptr, options);
  HttpRequest request{"GET", "/api/v1/pods?watch=true", {}, ""};
  HttpResponse response = forever.Route(request);
  REQUIRE(response.stream);
  CHECK_FALSE(response.stream->Timeout());
  response.stream->Stop();
}

}  // namespace
}  // namespace pjemu::apiserver
