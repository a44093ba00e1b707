// What the persisted store does when its data file is damaged or the disk fills: the start stops
// with a message naming the file; a write that cannot be made durable is refused with a 500
// (kInternal) carrying SQLite's reason, the store in memory and on disk stays as it was.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>

#include "emulator/persist/sqlite_durability.h"
#include "tests/persist/persist_test_util.h"

namespace pjemu::persist {
namespace {

namespace fs = std::filesystem;
using testing::ConfigMap;
using testing::ConfigMaps;
using testing::FreshDir;
using testing::Must;

Result<PersistedStore> Open(const Clock& clock, const std::string& dir,
                            std::int64_t max_pages = 0) {
  PersistOptions po;
  po.data_dir = dir;
  po.max_page_count = max_pages;
  return OpenStore(clock, store::StoreOptions{}, po);
}

// A data directory holding a few configmaps, closed and checkpointed (everything in pjemu.db).
std::string Populated(const std::string& name) {
  FakeClock clock;
  std::string dir = FreshDir(name);
  auto p = Must(Open(clock, dir));
  for (int i = 0; i < 50; ++i) {
    Must(p.store->Create(ConfigMaps(), "default",
                         ConfigMap("cm-" + std::to_string(i), std::string(200, 'x'))));
  }
  return dir;
}

void CheckRefused(const std::string& dir, const std::string& why) {
  FakeClock clock;
  auto p = Open(clock, dir);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == Code::kInternal);
  CHECK_THAT(p.status().message(), Catch::Contains(dir + "/pjemu.db"));
  CHECK_THAT(p.status().message(), Catch::Contains(why));
}

TEST_CASE("a garbled database header stops the start naming the file") {
  std::string dir = Populated("garbled");
  {
    std::fstream f(dir + "/pjemu.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("this is not sqlite", 18);
  }
  CheckRefused(dir, "not a database");
}

TEST_CASE("a truncated database stops the start naming the file") {
  std::string dir = Populated("truncated");
  fs::resize_file(dir + "/pjemu.db", fs::file_size(dir + "/pjemu.db") / 2);
  CheckRefused(dir, "corrupt");
}

TEST_CASE("a database truncated to nothing is not taken for a new one") {
  std::string dir = Populated("empty");
  fs::resize_file(dir + "/pjemu.db", 0);
  CheckRefused(dir, "is empty");
}

TEST_CASE("garbled pages inside the database stop the start") {
  std::string dir = Populated("pages");
  auto size = fs::file_size(dir + "/pjemu.db");
  {
    std::fstream f(dir + "/pjemu.db", std::ios::in | std::ios::out | std::ios::binary);
    std::string junk(4096, '\x5a');
    for (std::uintmax_t at = 4096; at + 4096 <= size; at += 3 * 4096) {  // past the header page
      f.seekp(static_cast<std::streamoff>(at));
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  CheckRefused(dir, "corrupt");
}

TEST_CASE("a row that does not decode stops the start naming the file and the row") {
  std::string dir = Populated("row");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir + "/pjemu.db").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE objects SET object = '{not json' WHERE name = 'cm-7'", nullptr,
                       nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CheckRefused(dir, "object configmaps default/cm-7: not JSON");
}

TEST_CASE("a data directory that is a file is a clear error") {
  std::string dir = FreshDir("file");
  std::ofstream(dir + "/plain") << "x";
  FakeClock clock;
  auto p = Open(clock, dir + "/plain");
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.status().message(), Catch::Contains("cannot use data directory " + dir + "/plain"));
}

TEST_CASE("a full disk refuses the write with a 500, and the store stays consistent") {
  FakeClock clock;
  std::string dir = FreshDir("full");
  std::vector<Json> acknowledged;
  std::uint64_t rv_before_full = 0;
  {
    // SQLite's max_page_count stands in for a full file system (SQLITE_FULL either way).
    auto p = Must(Open(clock, dir, /*max_pages=*/40));
    Status refused = Status::Ok();
    for (int i = 0; i < 1000 && refused.ok(); ++i) {
      rv_before_full = p.store->ResourceVersion();
      auto r = p.store->Create(ConfigMaps(), "default",
                               ConfigMap("cm-" + std::to_string(i), std::string(2000, 'y')));
      if (r.ok()) {
        acknowledged.push_back(*r);
      } else {
        refused = r.status();
      }
    }
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.code() == Code::kInternal);  // a 500 InternalError on the wire
    CHECK_THAT(refused.message(), Catch::Contains("full"));
    CHECK_THAT(refused.message(), Catch::Contains(dir + "/pjemu.db"));
    std::string refused_name = "cm-" + std::to_string(acknowledged.size());
    // Not half there: not in memory, the RV did not move, and a watch never saw it.
    CHECK(p.store->Get(ConfigMaps(), "default", refused_name).status().code() ==
          Code::kNotFound);
    CHECK(p.store->ResourceVersion() == rv_before_full);
    // Smaller writes that fit still go through, deletes free room.
    Must(p.store->Delete(ConfigMaps(), "default", "cm-0"));
    acknowledged.erase(acknowledged.begin());
  }
  auto p = Must(Open(clock, dir));
  Json list = Must(p.store->List(ConfigMaps(), "default"));
  REQUIRE(list["items"].size() == acknowledged.size());
  std::map<std::string, Json> loaded;
  for (const Json& item : list["items"]) loaded[item["metadata"]["name"]] = item;
  for (const Json& want : acknowledged) CHECK(loaded[want["metadata"]["name"]] == want);
}

TEST_CASE("a failed commit undoes a garbage-collection cascade in memory") {
  FakeClock clock;
  std::string dir = FreshDir("undo");
  auto p = Must(Open(clock, dir, /*max_pages=*/40));
  // Large enough that the change log's DELETED rows (object and old state) need fresh pages.
  Json owner =
      Must(p.store->Create(ConfigMaps(), "default", ConfigMap("owner", std::string(3000, 'o'))));
  Json dep = ConfigMap("dep", std::string(3000, 'd'));
  dep["metadata"]["labels"] = {{"app", "dep"}};
  dep["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                         {"kind", "ConfigMap"},
                                         {"name", "owner"},
                                         {"uid", owner["metadata"]["uid"]}}};
  Json dep_stored = Must(p.store->Create(ConfigMaps(), "default", dep));
  // Fill the disk up, then the owner's delete (two removals and their log rows) cannot commit.
  for (int i = 0; i < 1000; ++i) {
    if (!p.store->Create(ConfigMaps(), "default",
                         ConfigMap("fill-" + std::to_string(i), std::string(2000, 'z')))
             .ok()) {
      break;
    }
  }
  for (int i = 0; i < 1000; ++i) {  // and the last crumbs
    if (!p.store->Create(ConfigMaps(), "default", ConfigMap("crumb-" + std::to_string(i), "z"))
             .ok()) {
      break;
    }
  }
  std::uint64_t rv = p.store->ResourceVersion();
  auto deleted = p.store->Delete(ConfigMaps(), "default", "owner");
  REQUIRE_FALSE(deleted.ok());
  CHECK(deleted.status().code() == Code::kInternal);
  CHECK(p.store->ResourceVersion() == rv);
  CHECK(Must(p.store->Get(ConfigMaps(), "default", "owner")) == owner);
  CHECK(Must(p.store->Get(ConfigMaps(), "default", "dep")) == dep_stored);
  // The label index is back too (the undo stored the dependent again): a list by label finds it.
  api::ListOptions by_label;
  by_label.label_selector = "app=dep";
  Json listed = Must(p.store->List(ConfigMaps(), "default", by_label));
  REQUIRE(listed["items"].size() == 1);
  CHECK(listed["items"][0] == dep_stored);
}

}  // namespace
}  // namespace pjemu::persist
