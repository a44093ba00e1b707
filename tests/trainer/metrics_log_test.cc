// MetricsLog: the JSON lines and the TensorBoard scalars a rank writes into --dir, with the
// reference's tags and steps ("loss" at epoch * batches + batch, "accuracy" at epoch).
#include "trainer/metrics_log.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/temp_dir.h"
#include "tf_event_reader.h"

namespace pjemu::trainer {
namespace {

namespace fs = std::filesystem;

TEST_CASE("MetricsLog writes the reference's TensorBoard scalars beside the JSON lines",
          "[metrics]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp / "logs";
  {
    MetricsLog log;
    REQUIRE(log.Open(dir, 1).ok());
    CHECK(log.path() == dir + "/metrics-rank1.jsonl");
    const std::string name = fs::path(log.events_path()).filename().string();
    CHECK(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\.[^/]+\.)" +
                                            std::to_string(getpid()) + R"(\.\d+)")));
    // Epoch 2 of a 2-rank run (469 batches per rank): the reference's niter = 2 * 469 + batch.
    log.Step(2, 470, 0, 469, 2.2965f, 0, 1.5);
    log.Step(2, 480, 10, 469, 0.5f, 640, 2.5);
    log.Epoch(2, 0.6954, 0.84, 469, 10, 9, 5500, 12);
  }
  auto split = testing::SplitRecords(testing::ReadBytes([&] {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) {
        return e.path().string();
      }
    }
    return std::string();
  }()));
  REQUIRE(split.error.empty());
  REQUIRE(split.records.size() == 4);
  std::vector<testing::DecodedEvent> ev;
  for (const auto& r : split.records) {
    auto d = testing::DecodeEvent(r.data);
    REQUIRE(d.error.empty());
    ev.push_back(d.event);
  }
  CHECK(ev[0].file_version == std::string("brain.Event:2"));
  CHECK(ev[1].step == 938);
  CHECK(ev[1].values.at(0).tag == "loss");
  CHECK(ev[1].values.at(0).simple_value == 2.2965f);
  CHECK(ev[2].step == 948);
  CHECK(ev[2].values.at(0).simple_value == 0.5f);
  CHECK(ev[3].step == 2);
  CHECK(ev[3].values.at(0).tag == "accuracy");
  CHECK(ev[3].values.at(0).simple_value == static_cast<float>(0.6954));
  // Wall times are the system clock's, in order, after the file's creation.
  CHECK(ev[0].wall_time > 1.6e9);
  CHECK(ev[1].wall_time >= ev[0].wall_time);
  CHECK(ev[3].wall_time >= ev[1].wall_time);
  // The JSON lines are unchanged.
  std::ifstream in(dir + "/metrics-rank1.jsonl");
  std::string first;
  std::getline(in, first);
  CHECK(first == R"({"type":"step","epoch":2,"step":470,"batch":0,"loss":2.296500,"samples":0,)"
                 R"("time":1.500})");
}

TEST_CASE("a reopened MetricsLog appends JSON lines and starts a new events file", "[metrics]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  for (int run = 0; run < 2; ++run) {
    MetricsLog log;
    REQUIRE(log.Open(dir, 0).ok());
    log.Step(1, 1, 0, 10, 1.0f, 0, 0);
  }
  int events = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    events += e.path().filename().string().find("tfevents") != std::string::npos;
  }
  CHECK(events == 2);
  std::ifstream in(dir + "/metrics-rank0.jsonl");
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  CHECK(lines == 2);
}

}  // namespace
}  // namespace pjemu::trainer
