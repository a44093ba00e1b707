// Given repeated container failures, the backoff should follow the kubelet: immediate first
// restart, then 10 s doubling to 5 min, reset after 10 min of running.
#include "emulator/kubelet/crash_backoff.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

TEST_CASE("CrashLoopBackOff doubles from 10s to a 5 min cap", "[kubelet]") {
  CrashBackoff b;
  Time t = Time(std::chrono::seconds(FakeClock::kEpochSeconds));
  std::vector<Duration> delays;
  for (int i = 0; i < 8; ++i) {
    Duration d = b.NextDelay("pod/c", t);
    delays.push_back(d);
    t += d + 1s;  // the container runs for a second after each restart
  }
  std::vector<Duration> want = {0s, 10s, 20s, 40s, 80s, 160s, 300s, 300s};
  CHECK(delays == want);
}

TEST_CASE("CrashLoopBackOff resets after the container ran 10 minutes", "[kubelet]") {
  CrashBackoff b;
  Time t = Time(std::chrono::seconds(FakeClock::kEpochSeconds));
  CHECK(b.NextDelay("k", t) == 0s);
  CHECK(b.NextDelay("k", t + 1s) == 10s);
  CHECK(b.NextDelay("k", t + 12s) == 20s);
  // Restarted at t+32s; fails 10 min + 1 s later.
  CHECK(b.NextDelay("k", t + 32s + 601s) == 0s);
  CHECK(b.NextDelay("k", t + 32s + 602s) == 10s);
  CHECK(b.NextDelay("other", t) == 0s);  // keys are independent
}

TEST_CASE("the backoff scale shrinks every duration", "[kubelet]") {
  CrashBackoff b(0.01);
  CHECK(b.initial() == 100ms);
  CHECK(b.max() == 3s);
  Time t{};
  CHECK(b.NextDelay("k", t) == 0s);
  CHECK(b.NextDelay("k", t) == 100ms);
  CHECK(b.NextDelay("k", t + 100ms) == 200ms);
}

}  // namespace
}  // namespace pjemu::kubelet
