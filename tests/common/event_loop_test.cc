// Given tasks posted at virtual times, the EventLoop must run them in (due, post) order
// without sleeping, and cancelled tasks must never run.
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "emulator/common/event_loop.h"

using namespace pjemu;

TEST_CASE("tasks run in due order, ties in post order", "[common]") {
  FakeClock clock;
  EventLoop loop(clock);
  std::string order;
  loop.PostAfter(2s, [&] { order += "c"; });
  loop.Post([&] { order += "a"; });
  loop.Post([&] { order += "b"; });
  loop.PostAfter(1s, [&] { order += "x"; });
  CHECK(loop.RunUntilIdle() == 2);
  CHECK(order == "ab");
  loop.RunFor(5s);
  CHECK(order == "abxc");
  CHECK(FormatTime(clock.Now()) == "2024-01-01T00:00:05Z");
}

TEST_CASE("RunFor jumps the fake clock timer by timer", "[common]") {
  FakeClock clock;
  EventLoop loop(clock);
  std::vector<std::string> seen;
  std::function<void()> tick = [&] {
    seen.push_back(FormatTime(clock.Now()));
    if (seen.size() < 3) loop.PostAfter(10min, tick);
  };
  loop.PostAfter(10min, tick);
  loop.RunFor(1h);
  CHECK(seen == std::vector<std::string>{"2024-01-01T00:10:00Z", "2024-01-01T00:20:00Z",
                                         "2024-01-01T00:30:00Z"});
  CHECK(loop.pending() == 0);
}

TEST_CASE("cancelled tasks never run", "[common]") {
  FakeClock clock;
  EventLoop loop(clock);
  int runs = 0;
  auto id = loop.PostAfter(1s, [&] { ++runs; });
  loop.PostAfter(2s, [&] { ++runs; });
  loop.Cancel(id);
  loop.RunFor(3s);
  CHECK(runs == 1);
}

TEST_CASE("RunUntil stops as soon as the predicate holds", "[common]") {
  FakeClock clock;
  EventLoop loop(clock);
  bool done = false;
  loop.PostAfter(30s, [&] { done = true; });
  loop.PostAfter(90s, [] {});
  CHECK(loop.RunUntil([&] { return done; }, 10min));
  CHECK(FormatTime(clock.Now()) == "2024-01-01T00:00:30Z");
  CHECK_FALSE(loop.RunUntil([] { return false; }, 1min));
}

TEST_CASE("real time: a task posted while RunUntil checks its predicate runs at once", "[common]") {
  // Given a task posted between running the due tasks and waiting (here by the predicate
  // itself), RunUntil must run it rather than sleep. A rescue thread wakes a stuck loop after
  // 3 s so that a regression fails on the elapsed time instead of hanging.
  RealClock clock;
  EventLoop loop(clock);
  bool posted = false, done = false;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread rescue([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(3), [&] { return finished; })) loop.Post([] {});
  });
  auto start = std::chrono::steady_clock::now();
  bool ok = loop.RunUntil(
      [&] {
        if (!posted) posted = true, loop.Post([&] { done = true; });
        return done;
      },
      30s);
  auto elapsed = std::chrono::steady_clock::now() - start;
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
  }
  cv.notify_all();
  rescue.join();
  CHECK(ok);
  CHECK(elapsed < std::chrono::seconds(1));
}
