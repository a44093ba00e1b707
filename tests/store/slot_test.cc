// Given versions that no reader holds, the sweeper should pack them a sweep period after they
// were written or read (on its thread), leave held ones as trees (also one a reader takes while
// it is being packed), and every read of a packed version should give a tree equal to the one
// stored; a store that packs after every write should answer every read,
// list and watch exactly as one that never packs.
#include "emulator/store/slot.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "emulator/api/managed_fields.h"
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

// A pod as a create by "controller" stored it, and its version after a /status write by "kubelet"
// whose managedFields are deferred (the store's Put leaves them so for Form::kInProcess).
struct DeferredPod {
  explicit DeferredPod(SlotSweeper& sweeper) {
    Json pod = PodJson("p");
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    api::UpdateManagedFields(api::Pods(), nullptr, pod, {"controller", {}, "t0", true});
    created = sweeper.Make(std::make_shared<const Json>(pod));
    Json running = api::CopyWithoutManagedFields(pod);
    running["status"] = {{"phase", "Running"}};
    write = {"kubelet", api::Subresource::kStatus, "t1", true};
    status = sweeper.Make(std::make_shared<const Json>(running));
    status->Defer({created, &api::Pods(), write, 1});
    // What the write would have stored had it computed them at once.
    expected = running;
    api::UpdateManagedFields(api::Pods(), &pod, expected, write);
  }
  api::ManagedWrite write;
  SlotPtr created, status;
  Json expected;
};

TEST_CASE("the packing thread computes a deferred version's managedFields before packing it",
          "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(1, mu);
  DeferredPod d(sweeper);
  CHECK(d.status->deferred_depth() == 1);
  CHECK_FALSE(d.status->Tree()->at("metadata").contains("managedFields"));
  std::weak_ptr<Slot> created = d.created;
  d.created.reset();  // only the deferred version holds the version it was written over now
  REQUIRE_FALSE(created.expired());
  for (int i = 0; i < 3; ++i) {
    sweeper.Fresh(sweeper.Make(std::make_shared<const Json>(Json{{"n", i}})));
    Sweep(mu, sweeper);
  }
  CHECK(d.status->packed());
  CHECK(d.status->deferred_depth() == 0);
  CHECK(created.expired());  // no longer held for it
  CHECK(*d.status->Served() == d.expected);
  // The actors' form stays the version without them: its own bytes.
  CHECK_FALSE(d.status->Tree()->at("metadata").contains("managedFields"));
}

TEST_CASE("a deferred version is computed for a reader that needs it and kept apart",
          "[store][slot]") {
  std::mutex mu;
  SlotSweeper sweeper(1, mu);
  DeferredPod d(sweeper);
  ObjectPtr raw = d.status->Tree();  // a reader holds the version without them
  std::lock_guard<std::mutex> lock(mu);
  ObjectPtr served = d.status->Served();
  CHECK(*served == d.expected);
  CHECK(d.status->deferred_depth() == 0);
  CHECK(d.status->Served() == served);  // one tree while a reader holds it
  CHECK(d.status->Tree() == raw);       // the actors' form as it was
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
  // Two equality terms: a packed candidate of the smaller set that the other lacks is skipped
  // unread.
  for (const char* selector : {"app=x", "app=x,i=5", "i==4,app in (x)", "app=y,i=4", "app=x,i=9"}) {
    by_label.label_selector = selector;
    out.push_back(Must(store.List(api::Pods(), "", by_label))["items"].dump());
  }
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

// A list whose selector has several equality terms skips a packed candidate that one term's
// index lacks without decoding it; the ones every term has are still read and matched. The
// packing thread runs on its own, so the pods are left unread while other writes pass and it
// packs them.
TEST_CASE("a list with several equality terms reads packed candidates every term selects",
          "[store][slot]") {
  FakeClock clock;
  StoreOptions options;
  options.pack_after_writes = 1;
  Store store(clock, options);
  for (int i = 0; i < 6; ++i) {
    Json labels = {
        {"job", "j"}, {"role", i == 0 ? "master" : "worker"}, {"index", std::to_string(i)}};
    Must(store.Create(api::Pods(), "default", PodJson("p" + std::to_string(i), labels)));
  }
  for (int i = 0; i < 40; ++i) {  // other writes: sweeps hand the pods to the packing thread
    Must(store.Create(api::Pods(), "default", PodJson("q" + std::to_string(i), {{"job", "k"}})));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto names = [&](const std::string& selector) {
    api::ListOptions by_label;
    by_label.label_selector = selector;
    std::vector<std::string> out;
    const Json list = Must(store.List(api::Pods(), "", by_label));
    for (const Json& pod : list["items"]) {
      out.push_back(pod["metadata"]["name"].get<std::string>());
    }
    return out;
  };
  CHECK(names("job=j,role=master") == std::vector<std::string>{"p0"});
  CHECK(names("role=worker,job=j,index=3") == std::vector<std::string>{"p3"});
  CHECK(names("job=j,index in (4),role!=master") == std::vector<std::string>{"p4"});
  CHECK(names("job=j,role=worker").size() == 5);
  CHECK(names("job=j,role=master,index=2").empty());
}

}  // namespace
}  // namespace pjemu::store::testing
