// Given raw output chunks, the CRI writer should produce one timestamped line per newline.
#include "emulator/process/cri_log_writer.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace pjemu::process {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("FormatNanoTime prints RFC 3339 with nanoseconds", "[process]") {
  Time t = Time(std::chrono::seconds(FakeClock::kEpochSeconds)) + 5s + 123456789ns;
  CHECK(FormatNanoTime(t) == "2024-01-01T00:00:05.123456789Z");
  CHECK(CriLine(t, "stderr", true, "x") == "2024-01-01T00:00:05.123456789Z stderr P x\n");
}

TEST_CASE("CriLogWriter splits chunks into lines and keeps streams apart", "[process]") {
  FakeClock clock;
  std::string path = std::string(PJEMU_BINARY_DIR) + "/cri_writer_test.log";
  std::remove(path.c_str());
  {
    CriLogWriter w(clock, path);
    REQUIRE(w.ok());
    w.Write("stdout", "hel");
    w.Write("stderr", "oops\n");
    clock.Advance(1s);
    w.Write("stdout", "lo\nwor");
    w.Write("stdout", "ld");
  }  // destructor flushes "world" as the last full line
  CHECK(ReadAll(path) ==
        "2024-01-01T00:00:00.000000000Z stderr F oops\n"
        "2024-01-01T00:00:01.000000000Z stdout F hello\n"
        "2024-01-01T00:00:01.000000000Z stdout F world\n");
}

TEST_CASE("CriLogWriter cuts lines over 16 KiB into partial chunks", "[process]") {
  FakeClock clock;
  std::string path = std::string(PJEMU_BINARY_DIR) + "/cri_writer_long.log";
  std::remove(path.c_str());
  {
    CriLogWriter w(clock, path);
    w.Write("stdout", std::string(16 * 1024 + 3, 'a') + "\n");
  }
  std::string text = ReadAll(path);
  CHECK(text.find(" stdout P ") != std::string::npos);
  CHECK(text.find(" stdout F aaa\n") != std::string::npos);
}

}  // namespace
}  // namespace pjemu::process
