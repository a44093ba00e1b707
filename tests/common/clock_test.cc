// Given timestamps and durations in the forms Kubernetes writes, parsing and formatting must
// round-trip exactly.
#include <catch2/catch.hpp>

#include "emulator/common/clock.h"

using namespace pjemu;

TEST_CASE("FakeClock starts at a fixed epoch and moves only when told", "[common]") {
  FakeClock clock;
  CHECK(FormatTime(clock.Now()) == "2024-01-01T00:00:00Z");
  clock.Advance(90s);
  CHECK(FormatTime(clock.Now()) == "2024-01-01T00:01:30Z");
  clock.Advance(1500us);
  CHECK(FormatMicroTime(clock.Now()) == "2024-01-01T00:01:30.001500Z");
}

TEST_CASE("FormatTime formats each time afresh, whatever it formatted before", "[common]") {
  const Time t = *ParseTime("2024-01-01T00:00:05Z");
  // The same second twice, then others around it (and before the epoch), then back.
  CHECK(FormatTime(t) == "2024-01-01T00:00:05Z");
  CHECK(FormatTime(t + 999ms) == "2024-01-01T00:00:05Z");
  CHECK(FormatTime(t + 1s) == "2024-01-01T00:00:06Z");
  CHECK(FormatTime(t - 1ms) == "2024-01-01T00:00:04Z");
  CHECK(FormatTime(Time{} - 1ms) == "1969-12-31T23:59:59Z");
  CHECK(FormatTime(Time{}) == "1970-01-01T00:00:00Z");
  CHECK(FormatTime(t) == "2024-01-01T00:00:05Z");
}

TEST_CASE("RFC 3339 times parse with fractions and offsets", "[common]") {
  auto [text, want] = GENERATE(table<std::string, std::string>({
      {"2024-01-01T00:00:05Z", "2024-01-01T00:00:05Z"},
      {"2024-01-01T00:00:05.999999999Z", "2024-01-01T00:00:05Z"},
      {"2024-01-01T02:00:05+02:00", "2024-01-01T00:00:05Z"},
      {"2023-12-31T23:00:05-01:00", "2024-01-01T00:00:05Z"},
  }));
  CAPTURE(text);
  auto t = ParseTime(text);
  REQUIRE(t.has_value());
  CHECK(FormatTime(*t) == want);
}

TEST_CASE("malformed times are refused", "[common]") {
  auto text = GENERATE(as<std::string>{}, "", "2024-01-01", "2024-13-01T00:00:00Z",
                       "2024-01-01T00:00:00", "2024-01-01T00:00:00Zjunk", "2024-01-01T00:00:00.Z");
  CAPTURE(text);
  CHECK_FALSE(ParseTime(text).has_value());
}

TEST_CASE("Go durations parse and ages print like kubectl", "[common]") {
  CHECK(ParseDuration("300ms") == Duration(300ms));
  CHECK(ParseDuration("1h30m") == Duration(90min));
  CHECK(ParseDuration("1.5s") == Duration(1500ms));
  CHECK_FALSE(ParseDuration("5 minutes").has_value());
  CHECK_FALSE(ParseDuration("").has_value());
  CHECK(FormatAge(5s) == "5s");
  CHECK(FormatAge(200s) == "3m20s");
  CHECK(FormatAge(45min) == "45m");
  CHECK(FormatAge(5h + 10min) == "5h10m");
  CHECK(FormatAge(std::chrono::hours(24 * 3 + 4)) == "3d4h");
}
