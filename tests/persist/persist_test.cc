// SqliteDurability under a Store: what one run acknowledged, the next run loads with the same
// resourceVersions; watches resume across the restart; a second server is kept off the dir.
#include <catch2/catch.hpp>

#include "emulator/persist/sqlite_durability.h"
#include "tests/persist/persist_test_util.h"

namespace pjemu::persist {
namespace {

using testing::ConfigMap;
using testing::ConfigMaps;
using testing::FreshDir;
using testing::Must;

PersistedStore Open(const Clock& clock, const std::string& dir, std::size_t history = 1000) {
  PersistOptions po;
  po.data_dir = dir;
  po.history = history;
  return Must(OpenStore(clock, store::StoreOptions{}, po));
}

TEST_CASE("a restart loads every object with its resourceVersion and the global RV") {
  FakeClock clock;
  std::string dir = FreshDir("restore");
  Json a, b_updated, job;
  std::uint64_t rv = 0;
  std::string deleted_uid;
  {
    auto p = Open(clock, dir);
    a = Must(p.store->Create(ConfigMaps(), "default", ConfigMap("a", "1")));
    Json b = Must(p.store->Create(ConfigMaps(), "default", ConfigMap("b", "1")));
    b["data"]["v"] = "2";
    b_updated = Must(p.store->Update(ConfigMaps(), "default", b));
    Json c = Must(p.store->Create(ConfigMaps(), "kubeflow", ConfigMap("c", "1")));
    deleted_uid = c["metadata"]["uid"];
    Must(p.store->Delete(ConfigMaps(), "kubeflow", "c"));
    rv = p.store->ResourceVersion();
  }
  auto p = Open(clock, dir);
  CHECK(p.store->ResourceVersion() == rv);
  CHECK(Must(p.store->Get(ConfigMaps(), "default", "a")) == a);
  CHECK(Must(p.store->Get(ConfigMaps(), "default", "b")) == b_updated);
  CHECK(p.store->Get(ConfigMaps(), "kubeflow", "c").status().code() == Code::kNotFound);
  // The default namespaces come back from disk, not created again (same uid, same RV).
  Json ns = Must(p.store->Get(api::Namespaces(), "", "default"));
  CHECK(ns["metadata"]["resourceVersion"] == "1");
  // New objects get the next RV and a uid the first run did not hand out.
  Json d = Must(p.store->Create(ConfigMaps(), "kubeflow", ConfigMap("c", "1")));
  CHECK(d["metadata"]["resourceVersion"] == std::to_string(rv + 1));
  CHECK(d["metadata"]["uid"] != deleted_uid);
  CHECK(d["metadata"]["uid"] != a["metadata"]["uid"]);
  // A stale RV still conflicts after the restart.
  Json stale = a;
  stale["metadata"]["resourceVersion"] = "2";
  CHECK(p.store->Update(ConfigMaps(), "default", stale).status().code() == Code::kConflict);
}

TEST_CASE("garbage collection after a restart finds the owners' dependents") {
  FakeClock clock;
  std::string dir = FreshDir("gc");
  {
    auto p = Open(clock, dir);
    Json owner = Must(p.store->Create(ConfigMaps(), "default", ConfigMap("owner", "1")));
    Json dep = ConfigMap("dep", "1");
    dep["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                           {"kind", "ConfigMap"},
                                           {"name", "owner"},
                                           {"uid", owner["metadata"]["uid"]}}};
    Must(p.store->Create(ConfigMaps(), "default", dep));
  }
  auto p = Open(clock, dir);
  Must(p.store->Delete(ConfigMaps(), "default", "owner"));
  CHECK(p.store->Get(ConfigMaps(), "default", "dep").status().code() == Code::kNotFound);
}

TEST_CASE("a watch resumes across a restart from a recent RV, and 410 before the window") {
  FakeClock clock;
  std::string dir = FreshDir("watch");
  std::uint64_t from = 0;
  {
    auto p = Open(clock, dir, /*history=*/6);
    Must(p.store->Create(ConfigMaps(), "default", ConfigMap("a", "1")));
    from = p.store->ResourceVersion();
    Json b = Must(p.store->Create(ConfigMaps(), "default", ConfigMap("b", "1")));
    b["data"]["v"] = "2";
    Must(p.store->Update(ConfigMaps(), "default", b));
    Must(p.store->Delete(ConfigMaps(), "default", "a"));
  }
  auto p = Open(clock, dir, 6);
  api::WatchOptions wo;
  wo.resource_version = std::to_string(from);
  auto w = Must(p.store->Watch(ConfigMaps(), "default", wo));
  std::vector<std::string> seen;
  while (auto e = w->TryNext()) {
    seen.push_back(std::string(api::WatchTypeName(e->type)) + " " +
                   e->object()["metadata"]["name"].get<std::string>() + " " +
                   e->object()["metadata"]["resourceVersion"].get<std::string>());
  }
  CHECK(seen == std::vector<std::string>{"ADDED b " + std::to_string(from + 1),
                                         "MODIFIED b " + std::to_string(from + 2),
                                         "DELETED a " + std::to_string(from + 3)});
  // Writes after the restart reach the resumed watch too.
  Must(p.store->Create(ConfigMaps(), "default", ConfigMap("c", "1")));
  auto e = w->TryNext();
  REQUIRE(e);
  CHECK(e->object()["metadata"]["name"] == "c");
  // The first RVs (the default namespaces) are out of the 6-change window.
  wo.resource_version = "1";
  CHECK(p.store->Watch(ConfigMaps(), "default", wo).status().code() == Code::kExpired);
}

TEST_CASE("a second server on the same data directory is refused") {
  FakeClock clock;
  std::string dir = FreshDir("lock");
  auto p = Open(clock, dir);
  PersistOptions po;
  po.data_dir = dir;
  auto second = OpenStore(clock, store::StoreOptions{}, po);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == Code::kUnavailable);
  CHECK_THAT(second.status().message(), Catch::Contains("in use by another pjemu"));
}

}  // namespace
}  // namespace pjemu::persist
