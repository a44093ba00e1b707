// Given the store's shared snapshots, ObjectTexts should serialize each snapshot once, whatever
// the number of watchers, with the very bytes WatchLine writes; and a watch fanned out to many
// HTTP watchers should send each of them the same line.
#include "emulator/apiserver/object_texts.h"

#include <catch2/catch.hpp>

#include "emulator/api/managed_fields.h"
#include "emulator/apiserver/watch_stream.h"
#include "tests/apiserver/router_fixture.h"

namespace pjemu::apiserver {
namespace {

Json Must(Result<Json> r) {
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("a snapshot is serialized once, as WatchLine writes it", "[apiserver][watch]") {
  ObjectTexts texts(2);
  auto a = std::make_shared<const Json>(Json{{"kind", "Pod"}, {"n", 1}, {"s", "\xff"}});
  auto b = std::make_shared<const Json>(Json{{"kind", "Pod"}, {"n", 2}});
  auto first = texts.Text(a);
  CHECK(texts.Text(a) == first);  // the same string, not an equal one
  CHECK(texts.made() == 1);
  CHECK(WatchLineOfText("MODIFIED", *first) == WatchLine("MODIFIED", *a));
  CHECK(WatchLine("ADDED", *b) == Json{{"type", "ADDED"}, {"object", *b}}.dump() + "\n");
  // An equal object that is another snapshot gets its own text.
  auto a2 = std::make_shared<const Json>(*a);
  CHECK(*texts.Text(a2) == *first);
  CHECK(texts.made() == 2);
  // Past the capacity the oldest is forgotten (and made again when asked).
  texts.Text(b);
  CHECK(texts.made() == 3);
  texts.Text(a);
  CHECK(texts.made() == 4);
  texts.Text(b);
  CHECK(texts.made() == 4);
}

TEST_CASE("every HTTP watcher of a change gets the same line", "[apiserver][watch]") {
  testing::RouterFixture f;
  const std::string jobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
  std::string rv = testing::RouterFixture::Body(f.Do("GET", jobs))["metadata"]["resourceVersion"];
  std::vector<HttpResponse> watches;
  for (int i = 0; i < 50; ++i) {
    watches.push_back(f.Do("GET", jobs + "?watch=1&resourceVersion=" + rv));
    REQUIRE(watches.back().stream);
  }
  auto created = f.Do("POST", jobs, testing::JobJson("a").dump());
  REQUIRE(created.status == 201);
  std::string expected = WatchLine("ADDED", Json::parse(created.body));
  for (auto& w : watches) {
    std::string raw;
    w.stream->Poll(&raw);
    CHECK(raw == expected);
    w.stream->Stop();
  }
}


TEST_CASE("GET and LIST bodies are the stored objects' text, byte for byte", "[apiserver][watch]") {
  testing::RouterFixture f;
  // The store's answers carry managedFields in their stored form; the wire's are objects.
  auto wire = [](Json object) {
    api::ExpandManagedFields(object);
    return object.dump();
  };
  const std::string jobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
  for (const char* name : {"a", "b", "c"}) {
    Json job = testing::JobJson(name);
    job["metadata"]["labels"] = {{"team", std::string(name) == "b" ? "y" : "x"}};
    job["metadata"]["annotations"] = {{"note", "caf\u00e9 \"quoted\""}};
    REQUIRE(f.Do("POST", jobs, job.dump()).status == 201);
  }
  REQUIRE(f.Do("POST", "/apis/kubeflow.org/v1/namespaces/kubeflow/pytorchjobs",
               testing::JobJson("d", "kubeflow").dump())
              .status == 201);
  auto same = [&](const std::string& target, const std::string& ns, api::ListOptions options) {
    INFO(target);
    auto response = f.Do("GET", target);
    REQUIRE(response.status == 200);
    CHECK(response.body == wire(Must(f.store.List(api::PyTorchJobs(), ns, options))));
    CHECK(f.Do("GET", target).body == response.body);  // again, from the texts kept
  };
  same(jobs, "default", {});
  same("/apis/kubeflow.org/v1/pytorchjobs", "", {});
  api::ListOptions x;
  x.label_selector = "team=x";
  same(jobs + "?labelSelector=team%3Dx", "default", x);
  api::ListOptions none;
  none.label_selector = "team=z";
  same(jobs + "?labelSelector=team%3Dz", "default", none);
  auto get = f.Do("GET", jobs + "/b");
  REQUIRE(get.status == 200);
  CHECK(get.body == wire(Must(f.store.Get(api::PyTorchJobs(), "default", "b"))));
  REQUIRE(f.Do("PATCH", jobs + "/b", R"({"metadata":{"labels":{"team":"x"}}})",
               {{"content-type", "application/merge-patch+json"}})
              .status == 200);
  CHECK(f.Do("GET", jobs + "/b").body ==
        wire(Must(f.store.Get(api::PyTorchJobs(), "default", "b"))));  // the new version's
  same(jobs + "?labelSelector=team%3Dx", "default", x);
}

}  // namespace
}  // namespace pjemu::apiserver
