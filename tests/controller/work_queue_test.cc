// Given a WorkQueue on a virtual-time EventLoop, keys should be de-duplicated, delayed adds keep
// the earliest time, and failures back off exponentially until Forget.
#include "emulator/controller/work_queue.h"

#include <catch2/catch.hpp>

namespace pjemu::controller {
namespace {

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  std::vector<std::pair<std::string, Time>> runs;
  WorkQueue queue{loop, [this](const Request& r) { runs.emplace_back(r.Key(), clock.Now()); }};
};

TEST_CASE("work queue: a key added twice runs once", "[controller]") {
  Fixture f;
  f.queue.Add({"ns", "a"});
  f.queue.Add({"ns", "a"});
  f.queue.Add({"ns", "b"});
  f.loop.RunUntilIdle();
  CHECK(f.runs.size() == 2);
}

TEST_CASE("work queue: AddAfter keeps the earliest time", "[controller]") {
  Fixture f;
  const Time t0 = f.clock.Now();
  f.queue.AddAfter({"ns", "a"}, 10s);
  f.queue.AddAfter({"ns", "a"}, 3s);
  f.queue.AddAfter({"ns", "a"}, 7s);
  f.loop.RunFor(20s);
  REQUIRE(f.runs.size() == 1);
  CHECK(f.runs[0].second == t0 + 3s);
}

TEST_CASE("work queue: rate-limited adds back off exponentially until Forget", "[controller]") {
  Fixture f;
  const Request r{"ns", "a"};
  const Time t0 = f.clock.Now();
  f.queue.AddRateLimited(r);  // 5ms
  f.loop.RunFor(1s);
  f.queue.AddRateLimited(r);  // 10ms
  f.loop.RunFor(1s);
  f.queue.AddRateLimited(r);  // 20ms
  f.loop.RunFor(1s);
  REQUIRE(f.runs.size() == 3);
  CHECK(f.runs[0].second == t0 + 5ms);
  CHECK(f.runs[1].second == t0 + 1s + 10ms);
  CHECK(f.runs[2].second == t0 + 2s + 20ms);
  CHECK(f.queue.NumRequeues(r) == 3);
  f.queue.Forget(r);
  CHECK(f.queue.NumRequeues(r) == 0);
}

TEST_CASE("work queue: ShutDown drops pending work", "[controller]") {
  Fixture f;
  f.queue.Add({"ns", "a"});
  f.queue.AddAfter({"ns", "b"}, 1s);
  f.queue.ShutDown();
  f.loop.RunFor(2s);
  CHECK(f.runs.empty());
}

}  // namespace
}  // namespace pjemu::controller
