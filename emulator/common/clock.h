// Clock: the one source of "now" in the emulator. Components take a Clock& and never call
// std::chrono::system_clock::now() themselves, so tests replay exactly with FakeClock.
// Time is wall time (Kubernetes timestamps are RFC 3339 UTC), Duration is nanoseconds.
// Thread safety: RealClock and FakeClock are safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace pjemu {

using Time = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;
using namespace std::chrono_literals;  // NOLINT: 30s, 10ms ... everywhere time is written

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
  // True for a clock that only moves when told (FakeClock): an EventLoop then jumps to the
  // next timer instead of waiting for it.
  virtual bool IsVirtual() const { return false; }
};

class RealClock final : public Clock {
 public:
  Time Now() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only through Advance/Set. Starts at 2024-01-01T00:00:00Z so that golden
// files hold stable timestamps.
class FakeClock final : public Clock {
 public:
  static constexpr std::int64_t kEpochSeconds = 1704067200;  // 2024-01-01T00:00:00Z
  FakeClock() : now_ns_(kEpochSeconds * 1'000'000'000LL) {}
  Time Now() const override { return Time(std::chrono::nanoseconds(now_ns_.load())); }
  bool IsVirtual() const override { return true; }
  void Advance(Duration d) { now_ns_ += d.count(); }
  // REQUIRES: t >= Now() (time never goes back).
  void Set(Time t) { now_ns_ = t.time_since_epoch().count(); }

 private:
  std::atomic<std::int64_t> now_ns_;
};

// "2024-01-01T00:00:05Z" (metav1.Time: seconds precision, UTC).
std::string FormatTime(Time t);
// "2024-01-01T00:00:05.123456Z" (metav1.MicroTime, used by events' eventTime).
std::string FormatMicroTime(Time t);
// Parses RFC 3339 ("...Z" or with an offset, optional fractional seconds); nullopt when malformed.
std::optional<Time> ParseTime(std::string_view text);
// Go-style duration text for humans and kubectl's AGE column: "5s", "3m20s", "2d4h".
std::string FormatAge(Duration d);
// Go's time.Duration.String(): "0s", "1.5s", "10.123456789s", "1m0.5s", "2h0m0s" (the
// metrics API's window, the kubelet's pull time).
std::string FormatGoDuration(Duration d);
// Parses "300ms", "30s", "5m", "1h30m" (Go's time.ParseDuration subset); nullopt when malformed.
std::optional<Duration> ParseDuration(std::string_view text);

}  // namespace pjemu
