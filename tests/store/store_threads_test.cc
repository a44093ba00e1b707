// Given several writer threads and watcher threads reading at the same time, the store should
// stay consistent: each watcher sees every event once, each object's events in RV order, and the
// final state adds up, also while unheld versions are packed after every write. (Run under
// -fsanitize=thread to check the locking.)
#include <atomic>
#include <map>
#include <thread>

#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

struct Reader {
  std::size_t seen = 0;
  bool ordered = true;
  std::map<std::string, std::uint64_t> last_rv;
  void Take(const api::WatchEvent& e) {
    ++seen;
    std::string name = e.object()["metadata"]["name"];
    std::uint64_t rv = std::stoull(Rv(e.object()));
    if (rv <= last_rv[name]) ordered = false;
    last_rv[name] = rv;
  }
};

TEST_CASE("concurrent writers and watchers stay consistent", "[store]") {
  RealClock clock;
  StoreOptions options;
  // The default, and packing (on the sweeper's thread) after every write.
  options.pack_after_writes = GENERATE(std::size_t{1024}, std::size_t{1});
  Store store(clock, options);
  constexpr int kWriters = 4, kObjects = 40, kReaders = 2;
  constexpr std::size_t kEvents = kWriters * kObjects * 2 + kWriters * kObjects / 2;
  std::atomic<bool> writers_done{false};

  std::vector<Reader> readers(kReaders);
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<api::Watch>> watches;
  for (int r = 0; r < kReaders; ++r) watches.push_back(Must(store.Watch(api::Pods(), "")));
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      // Blocking reads; stop once the writers are done and the queue is drained.
      while (true) {
        auto e = watches[r]->Next(5ms);
        if (e) {
          readers[r].Take(*e);
        } else if (writers_done.load()) {
          while (auto rest = watches[r]->TryNext()) readers[r].Take(*rest);
          return;
        }
      }
    });
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kObjects; ++i) {
        std::string name = "w" + std::to_string(t) + "-" + std::to_string(i);
        if (!store.Create(api::Pods(), "default", PodJson(name)).ok()) continue;
        (void)store.Patch(api::Pods(), "default", name, api::PatchType::kMerge,
                          {{"metadata", {{"labels", {{"step", "1"}}}}}});
        (void)store.List(api::Pods(), "default");
        if (i % 2 == 0) (void)store.Delete(api::Pods(), "default", name);
      }
    });
  }
  for (auto& w : writers) w.join();
  writers_done = true;
  for (auto& r : threads) r.join();
  for (const auto& r : readers) {
    CHECK(r.ordered);
    CHECK(r.seen == kEvents);  // ADDED + MODIFIED each, DELETED for half
  }
  CHECK(Must(store.List(api::Pods(), "default"))["items"].size() ==
        static_cast<std::size_t>(kWriters * kObjects / 2));
  CHECK(store.ResourceVersion() == 4 + kEvents);  // the 4 default namespaces, then each write
}

}  // namespace
}  // namespace pjemu::store::testing
