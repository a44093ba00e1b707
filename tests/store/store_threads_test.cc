// Given several writer threads and watchers reading concurrently, the store should stay
// consistent: every watcher sees each object's events in RV order and the final counts add up.
#include <atomic>
#include <map>
#include <thread>

#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

TEST_CASE("concurrent writers and watchers stay consistent", "[store]") {
  RealClock clock;
  Store store(clock);
  constexpr int kWriters = 4, kObjects = 50;
  auto watch = Must(store.Watch(api::Pods(), ""));
  std::atomic<int> notifications{0};
  watch->SetNotify([&] { notifications.fetch_add(1); });

  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kObjects; ++i) {
        std::string name = "w" + std::to_string(t) + "-" + std::to_string(i);
        auto created = store.Create(api::Pods(), "default", PodJson(name));
        if (!created.ok()) continue;
        (void)store.Patch(api::Pods(), "default", name, api::PatchType::kMerge,
                          {{"metadata", {{"labels", {{"step", "1"}}}}}});
        (void)store.List(api::Pods(), "default");
        if (i % 2 == 0) (void)store.Delete(api::Pods(), "default", name);
      }
    });
  }
  // A reader consuming while the writers run.
  std::map<std::string, std::uint64_t> last_rv;
  std::size_t seen = 0;
  bool ordered = true;
  auto consume = [&] {
    while (auto e = watch->TryNext()) {
      ++seen;
      std::string name = e->object["metadata"]["name"];
      std::uint64_t rv = std::stoull(Rv(e->object));
      if (rv <= last_rv[name]) ordered = false;
      last_rv[name] = rv;
    }
  };
  for (auto& th : threads) {
    while (th.joinable()) {
      consume();
      th.join();
    }
  }
  consume();
  CHECK(ordered);
  // Each object: ADDED + MODIFIED, and DELETED for half of them.
  CHECK(seen == static_cast<std::size_t>(kWriters * kObjects * 2 + kWriters * kObjects / 2));
  CHECK(Must(store.List(api::Pods(), "default"))["items"].size() ==
        static_cast<std::size_t>(kWriters * kObjects / 2));
  CHECK(notifications.load() > 0);
}

}  // namespace
}  // namespace pjemu::store::testing
