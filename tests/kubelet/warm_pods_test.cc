// Given pods read in some order, WarmPods should keep the most recently read ones as trees and
// park the rest (packed off the loop's thread) after the current task, never one that was read
// again or is going.
#include "emulator/kubelet/warm_pods.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/packed_json.h"

namespace pjemu::kubelet {
namespace {

struct Holder : Parkable {
  Holder(std::string n, std::vector<std::string>& log)
      : name(std::move(n)), parks(log), tree(std::make_shared<const Json>(Json{{"name", name}})) {}
  std::shared_ptr<const Json> ParkingTree() const override { return tree; }
  void Parked(std::string bytes) override {
    parks.push_back(name);
    packed = std::move(bytes);
    tree.reset();
  }
  std::string name;
  std::vector<std::string>& parks;
  std::shared_ptr<const Json> tree;
  std::string packed;
};

// A virtual-time loop and the names of the holders parked, in order.
struct Parks {
  FakeClock clock;
  EventLoop loop{clock};
  std::vector<std::string> parks;
};

TEST_CASE_METHOD(Parks, "the least recently read pods beyond capacity are parked after the task",
                 "[kubelet]") {
  Holder a("a", parks), b("b", parks), c("c", parks), d("d", parks);
  WarmPods warm(loop, 2);
  warm.Touch(&a);
  warm.Touch(&b);
  warm.Touch(&c);
  warm.Touch(&a);  // read again: the most recent
  CHECK(warm.warm() == 3);
  loop.RunUntilIdle();  // a quarter over capacity (2 + 0) asks for one pass
  warm.Flush();
  CHECK(parks == std::vector<std::string>{"b"});
  CHECK(UnpackJson(b.packed, "test") == Json{{"name", "b"}});
  CHECK(warm.warm() == 2);
  warm.Touch(&d);
  warm.Forget(&c);  // c is going: never parked after this
  loop.RunUntilIdle();
  warm.Flush();
  CHECK(parks == std::vector<std::string>{"b"});                // d and a fit again
  b.tree = std::make_shared<const Json>(Json{{"name", "b2"}});  // b read again
  warm.Touch(&b);
  loop.RunUntilIdle();
  warm.Flush();
  CHECK(parks == std::vector<std::string>{"b", "a"});
}

TEST_CASE_METHOD(Parks, "a pod read again while it is being packed keeps its tree", "[kubelet]") {
  Holder a("a", parks);
  WarmPods warm(loop, 0);
  warm.Touch(&a);
  CHECK(parks.empty());  // not under the caller's feet
  // A newer tree right after the pass hands a's tree to the packing thread: this task was posted
  // after the pass and before any install the thread posts, so it runs between the two whatever
  // the thread's speed (run after the pass instead, the install could come first).
  loop.Post([&] {
    CHECK(parks.empty());
    a.tree = std::make_shared<const Json>(Json{{"name", "a2"}});
    warm.Touch(&a);
  });
  loop.RunUntilIdle();
  warm.Flush();
  CHECK(parks == std::vector<std::string>{"a"});  // once: the older tree's bytes were dropped
  CHECK(UnpackJson(a.packed, "test") == Json{{"name", "a2"}});
  CHECK(warm.warm() == 0);
}

TEST_CASE_METHOD(Parks, "a WarmPods that goes cancels its pending pass", "[kubelet]") {
  Holder a("a", parks);
  {
    WarmPods warm(loop, 0);
    warm.Touch(&a);
  }
  CHECK(loop.RunUntilIdle() == 0);
  CHECK(parks.empty());
}

}  // namespace
}  // namespace pjemu::kubelet
