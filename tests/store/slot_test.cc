// Given versions that no reader holds, the sweeper should pack them a sweep period after they
// were written or read (on its thread), leave held ones as trees (also one a reader takes while
// it is being packed), and every read of a packed version should give a tree equal to the one
// stored; a store that packs after every write should answer every read,
// list and watch exactly as one that never packs.
#include "emulator/store/slot.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

Json Varied() {
  return {{"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}}},
          {"spec",
           {{"containers", {{{"name", "main"}, {"args", {"-x", "ünïcödé ✓", ""}}}}},
            {"priority", -5},
            {"ratio", 0.25},
            {"big", 18446744073709551615ULL},
            {"nothing", nullptr},
            {"flag", true},
            {"empty", Json::object()}}}};
}

// A sweep under the slots' mutex, then waiting for the packing thread (as the store does it).
void Sweep(std::mutex& mu, SlotSweeper& sweeper) {
  {
    std::lock_guard<std::mutex> lock(mu);
    sweeper.MaybeSweep();
  }
  sweeper.Flush();
}

TEST_CASE("the sweeper packs unheld versions a period after they were fresh", "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(2, mu);
  SlotPtr unheld = sweeper.Make(std::make_shared<const Json>(Varied()));
  ObjectPtr reader = std::make_shared<const Json>(Varied());
  SlotPtr held = sweeper.Make(reader);
  Sweep(mu, sweeper);  // both are fresh: nothing is packed yet
  CHECK_FALSE(unheld->packed());
  CHECK_FALSE(held->packed());

  SlotPtr later = sweeper.Make(std::make_shared<const Json>(Json{{"n", 1}}));
  sweeper.Fresh(later);  // two fresh entries: the period is reached
  Sweep(mu, sweeper);
  CHECK(unheld->packed());
  CHECK(unheld->packed_bytes() > 0);
  CHECK_FALSE(held->packed());   // a reader holds its tree
  CHECK_FALSE(later->packed());  // fresh in this period
  CHECK(sweeper.packed_total() == 1);

  // A read decodes an equal tree and makes the slot fresh again; packing it again reuses the
  // packed bytes.
  std::size_t bytes = unheld->packed_bytes();
  ObjectPtr read = unheld->Tree();
  CHECK(*read == Varied());
  CHECK((*read)["spec"]["priority"].get<int>() == -5);
  CHECK(read->dump() == Varied().dump());
  CHECK_FALSE(unheld->packed());
  read.reset();
  reader.reset();  // the held one's reader lets go
  for (int i = 0; i < 4; ++i) {
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", i}})));
    Sweep(mu, sweeper);
  }
  CHECK(unheld->packed());
  CHECK(unheld->packed_bytes() == bytes);
  CHECK(held->packed());
  CHECK(*held->Tree() == Varied());
}

TEST_CASE("a version read while it is being packed stays a tree", "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(1, mu);
  SlotPtr slot = sweeper.Make(std::make_shared<const Json>(Varied()));
  ObjectPtr reader;
  {
    std::lock_guard<std::mutex> lock(mu);
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 0}})));
    sweeper.MaybeSweep();  // ages the first two
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 1}})));
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 2}})));
    sweeper.MaybeSweep();  // hands `slot` to the packing thread
    reader = slot->Tree();  // before the thread can install (it needs `mu`)
  }
  sweeper.Flush();
  CHECK_FALSE(slot->packed());  // the bytes are kept, the tree stays for its reader
  CHECK(slot->packed_bytes() > 0);
  CHECK(*reader == Varied());
}

Json Managed() {
  Json v = Varied();
  v["metadata"]["managedFields"] = {{{"manager", "m"}, {"fieldsV1", {{"f:spec", Json::object()}}}}};
  return v;
}

Json Unmanaged() {
  Json v = Varied();
  v["metadata"].erase("managedFields");
  return v;
}

// Sweeps (each after a fresh slot) until `slot` is packed; false when it never is.
bool PackedBySweeps(std::mutex& mu, SlotSweeper& sweeper, const SlotPtr& slot) {
  for (int i = 0; i < 8 && !slot->packed(); ++i) {
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", i}})));
    Sweep(mu, sweeper);
  }
  return slot->packed();
}

TEST_CASE("a packed version read without managedFields is held so until a whole read",
          "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(1, mu);
  SlotPtr slot = sweeper.Make(std::make_shared<const Json>(Managed()));
  // Held as a tree, it is handed out whole whatever the reader omits.
  CHECK(*slot->TreeWithoutManagedFields() == Managed());
  REQUIRE(PackedBySweeps(mu, sweeper, slot));

  ObjectPtr lean = slot->TreeWithoutManagedFields();
  CHECK(*lean == Unmanaged());
  CHECK(slot->TreeWithoutManagedFields() == lean);  // held: not decoded again
  CHECK(slot->Unpacked() == nullptr);               // not the whole version
  ObjectPtr whole = slot->Tree();
  CHECK(*whole == Managed());
  CHECK(slot->Unpacked() == whole);
  CHECK(slot->TreeWithoutManagedFields() == whole);
  CHECK(*lean == Unmanaged());  // its reader's tree is untouched

  // Still watched by the sweeper: packed again once no one holds it.
  lean.reset();
  whole.reset();
  CHECK(PackedBySweeps(mu, sweeper, slot));
  CHECK(*slot->Tree() == Managed());
}

TEST_CASE("a lean version read whole while it is being packed stays watched", "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(1, mu);
  SlotPtr slot = sweeper.Make(std::make_shared<const Json>(Managed()));
  REQUIRE(PackedBySweeps(mu, sweeper, slot));
  (void)slot->TreeWithoutManagedFields();  // fresh again, held by no reader
  ObjectPtr whole;
  {
    std::lock_guard<std::mutex> lock(mu);
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 0}})));
    sweeper.MaybeSweep();  // ages it
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 1}})));
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", 2}})));
    sweeper.MaybeSweep();  // hands its lean tree to the packing thread
    whole = slot->Tree();  // replaced by the whole one before the thread installs
  }
  sweeper.Flush();
  CHECK_FALSE(slot->packed());
  CHECK(*whole == Managed());
  whole.reset();
  CHECK(PackedBySweeps(mu, sweeper, slot));
}

TEST_CASE("the store hands readers omitting managedFields packed versions without them",
          "[store][slot]") {
  FakeClock clock;
  StoreOptions packing;
  packing.pack_after_writes = 1;
  Store store(clock, packing);
  api::WriteOptions by;
  by.field_manager = "test";
  Must(store.Create(api::Pods(), "default", PodJson("a", {{"app", "x"}}), by));
  // Versions no one holds are packed a few writes later, on the sweeper's thread; the omitting
  // reads then lack them.
  bool lean = false;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  for (int i = 0; !lean && std::chrono::steady_clock::now() < give_up; ++i) {
    Must(store.Create(api::ConfigMaps(), "default",
                      {{"metadata", {{"name", "c" + std::to_string(i)}}}}, by));
    std::this_thread::sleep_for(1ms);
    api::ListOptions by_label;
    by_label.label_selector = "app=x";
    SharedList listed =
        Must(store.ListShared(api::Pods(), "default", by_label, Omit::kManagedFields));
    REQUIRE(listed.items.size() == 1);
    lean = !listed.items[0]->at("metadata").contains("managedFields");
  }
  REQUIRE(lean);
  ObjectPtr got = Must(store.GetShared(api::Pods(), "default", "a", Omit::kManagedFields));
  CHECK_FALSE(got->at("metadata").contains("managedFields"));
  // Whole reads, and the API's, have them; so does a write of the lean version.
  CHECK(
      Must(store.GetShared(api::Pods(), "default", "a"))->at("metadata").contains("managedFields"));
  Json changed = *got;
  changed["metadata"]["labels"]["b"] = "2";
  Json updated = Must(store.Update(api::Pods(), "default", changed, api::Subresource::kNone, by));
  REQUIRE(updated["metadata"]["managedFields"].size() == 1);
  CHECK(updated["metadata"]["managedFields"][0]["fieldsV1"].dump().find("f:b") !=
        std::string::npos);
  CHECK(updated["metadata"]["managedFields"][0]["fieldsV1"].dump().find("f:containers") !=
        std::string::npos);
}

TEST_CASE("a sweeper with period 0 never packs", "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(0, mu);
  SlotPtr slot = sweeper.Make(std::make_shared<const Json>(Varied()));
  for (int i = 0; i < 8; ++i) {
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", i}})));
    Sweep(mu, sweeper);
  }
  CHECK_FALSE(slot->packed());
  CHECK(sweeper.packed_total() == 0);
}

// Every read a client can make, as text, in order.
std::vector<std::string> Reads(Store& store) {
  std::vector<std::string> out;
  for (const char* name : {"a", "b", "c"}) {
    auto got = store.Get(api::Pods(), "default", name);
    out.push_back(got.ok() ? got->dump() : got.status().ToString());
  }
  out.push_back(Must(store.List(api::Pods(), "default"))["items"].dump());
  api::ListOptions by_label;
  by_label.label_selector = "app=x";
  out.push_back(Must(store.List(api::Pods(), "", by_label))["items"].dump());
  for (const std::string rv : {"1", "8"}) {
    api::WatchOptions from;
    from.resource_version = rv;
    from.label_selector = rv == "8" ? "app=x" : "";
    auto w = Must(store.Watch(api::Pods(), "default", from));
    while (auto e = w->TryNext()) out.push_back(e->object().dump());
  }
  return out;
}

// The first round creates a, b and c; the next one creates c again.
void Writes(Store& store, bool first) {
  for (const char* name : {"a", "b", "c"}) {
    if (!first && std::string(name) != "c") continue;
    Must(store.Create(api::Pods(), "default", PodJson(name, {{"app", "x"}})));
  }
  for (int i = 0; i < 6; ++i) {
    Json labels = {{"app", i % 3 ? "x" : "y"}, {"i", std::to_string(i)}};
    Must(store.Patch(api::Pods(), "default", i % 2 ? "a" : "b", api::PatchType::kMerge,
                     {{"metadata", {{"labels", labels}}}}));
  }
  Must(store.Delete(api::Pods(), "default", "c"));
}

TEST_CASE("a store that packs after every write reads, lists and watches as one that never does",
          "[store][slot]") {
  FakeClock clock;
  StoreOptions packing;
  packing.pack_after_writes = 1;
  StoreOptions never;
  never.pack_after_writes = 0;
  Store packed(clock, packing), plain(clock, never);
  Writes(packed, true);
  Writes(plain, true);
  CHECK(Reads(packed) == Reads(plain));
  Writes(packed, false);  // updates of packed versions, c created again
  Writes(plain, false);
  CHECK(Reads(packed) == Reads(plain));
}

}  // namespace
}  // namespace pjemu::store::testing
