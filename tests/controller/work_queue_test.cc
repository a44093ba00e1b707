// Given a WorkQueue on a virtual-time EventLoop, keys should be de-duplicated, delayed adds keep
// the earliest time, failures back off exponentially until Forget, and a turn should run behind
// what is due at its instant.
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

TEST_CASE("work queue: a turn comes after the timers due at its instant, so their adds coalesce",
          "[controller]") {
  Fixture f;
  const Time t = f.clock.Now() + 1s;
  // A kubelet moving each of a job's three pods on at one instant; each write's event adds the
  // job's key.
  for (int pod = 0; pod < 3; ++pod) f.loop.PostAt(t, [&f] { f.queue.Add({"ns", "job"}); });
  f.loop.RunFor(2s);
  REQUIRE(f.runs.size() == 1);
  CHECK(f.runs[0].second == t);
}

TEST_CASE("work queue: what a handler posts runs before the next key's turn", "[controller]") {
  FakeClock clock;
  EventLoop loop{clock};
  std::vector<std::string> order;
  WorkQueue queue{loop, [&](const Request& r) {
                    order.push_back(r.name);
                    loop.Post([&order, name = r.name] { order.push_back("drain after " + name); });
                  }};
  queue.Add({"ns", "a"});
  queue.Add({"ns", "b"});
  loop.RunUntilIdle();
  CHECK(order == std::vector<std::string>{"a", "drain after a", "b", "drain after b"});
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
