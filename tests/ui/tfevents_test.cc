#include "emulator/ui/tfevents.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace pjemu::ui {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(PJEMU_SOURCE_DIR) + "/tests/ui/tfevents";

using pjemu::testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

const ScalarSeries* Find(const ScalarScan& scan, const std::string& tag, const std::string& run) {
  for (const ScalarSeries& s : scan.series) {
    if (s.tag == tag && s.run == run) return &s;
  }
  return nullptr;
}

// The tutorial's values as make_tfevents.py writes them (float32 on the wire).
float TrainLoss(int epoch, int step) {
  return static_cast<float>(2.3 - 0.1 * epoch - 0.0004 * step);
}

void CheckTutorialScalars(const ScalarScan& scan, const std::string& run) {
  INFO("run " << run);
  REQUIRE(scan.errors.empty());
  const ScalarSeries* loss = Find(scan, "train/loss", run);
  REQUIRE(loss != nullptr);
  REQUIRE(loss->points.size() == 9);
  CHECK(loss->points.front().step == 125);
  CHECK(loss->points.front().value == TrainLoss(1, 125));
  CHECK(loss->points.back().step == 3 * 375);
  CHECK(loss->points.back().value == TrainLoss(3, 375));
  CHECK(loss->points.front().wall_time == 1764201600.0 + 0);
  const ScalarSeries* acc = Find(scan, "val/accuracy", run);
  REQUIRE(acc != nullptr);
  REQUIRE(acc->points.size() == 3);
  CHECK(acc->points[1].step == 750);
  CHECK(acc->points[1].value == static_cast<float>(0.9 + 0.04));
  REQUIRE(Find(scan, "val/loss", run) != nullptr);
}

TEST_CASE("tfevents: CRC-32C and framing match TFRecord's") {
  // The check value of CRC-32C, masked as TFRecord masks it.
  std::uint32_t crc = 0xE3069283u;
  CHECK(MaskedCrc32c("123456789") == ((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
  std::string framed = FrameTfRecord("abc");
  CHECK(framed.size() == 8 + 4 + 3 + 4);
  std::vector<std::string> seen;
  RecordScan scan = ScanTfRecords(framed + FrameTfRecord(""), [&](std::string_view d, std::size_t) {
    seen.emplace_back(d);
    return std::string();
  });
  CHECK(scan.error.empty());
  CHECK_FALSE(scan.partial);
  CHECK(seen == std::vector<std::string>{"abc", ""});
}

TEST_CASE("tfevents: torch.utils.tensorboard, tensorboardX and TensorFlow 2 shapes") {
  ScalarScan torch = ScanScalars({kFixtures + "/torch"}, {});
  CHECK(torch.files.size() == 1);
  CHECK(torch.series.size() == 3);
  CheckTutorialScalars(torch, ".");
  CheckTutorialScalars(ScanScalars({kFixtures + "/tensorboardx"}, {}), ".");
  // TF2: float tensors (tensor_content and float_val); the image's string tensor is skipped.
  ScalarScan tf2 = ScanScalars({kFixtures + "/tf2"}, {});
  CheckTutorialScalars(tf2, "train");
  CHECK(tf2.series.size() == 3);
  // Several dirs: runs named by the dirs' labels; the whole tree at once.
  ScalarScan both = ScanScalars({kFixtures + "/torch", kFixtures + "/tf2"}, {"a", "b"});
  CheckTutorialScalars(both, "a");
  CheckTutorialScalars(both, "b/train");
  ScalarScan all = ScanScalars({kFixtures}, {});
  CHECK(all.files.size() == 3);
  CHECK(all.series.size() == 9);
}

TEST_CASE("tfevents: the fixtures are what make_tfevents.py writes with Debian's protobuf") {
  if (::access("/usr/bin/python3", X_OK) != 0) {
    WARN("skipped: no /usr/bin/python3");
    return;
  }
  TempDir tmp;
  std::string cmd = "/usr/bin/python3 " + std::string(PJEMU_SOURCE_DIR) +
                    "/tests/ui/make_tfevents.py " + tmp.path();
  int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
    WARN("skipped: python3-protobuf or python3-crc32c missing");
    return;
  }
  REQUIRE(rc == 0);
  for (const char* file : {"/torch/events.out.tfevents.1764201600.node-0.4242.0",
                           "/tensorboardx/events.out.tfevents.1764201600.node-0",
                           "/tf2/train/events.out.tfevents.1764201600.node-0.v2"}) {
    INFO(file);
    CHECK(ReadAll(tmp.path() + file) == ReadAll(kFixtures + file));
  }
  CheckTutorialScalars(ScanScalars({tmp.path() + "/torch"}, {}), ".");
}

TEST_CASE("tfevents: corruption is reported at file:offset, what came before is kept") {
  TempDir tmp;
  const std::string original = ReadAll(kFixtures + "/torch/events.out.tfevents.1764201600.node-0.4242.0");
  // Record offsets: walk the framing.
  std::vector<std::size_t> offsets;
  (void)ScanTfRecords(original, [&](std::string_view, std::size_t at) {
    offsets.push_back(at);
    return std::string();
  });
  REQUIRE(offsets.size() == 16);  // file_version + 15 scalars
  const std::string file = tmp.path() + "/events.out.tfevents.1.x";

  SECTION("a flipped data byte") {
    std::string bytes = original;
    bytes[offsets[4] + 14] ^= 0x01;
    WriteAll(file, bytes);
    ScalarScan scan = ScanScalars({tmp.path()}, {});
    REQUIRE(scan.errors.size() == 1);
    CHECK(scan.errors[0].rfind(file + ":" + std::to_string(offsets[4]) +
                                   ": corrupt record: the data's CRC-32C is ",
                               0) == 0);
    REQUIRE(Find(scan, "train/loss", ".") != nullptr);
    CHECK(Find(scan, "train/loss", ".")->points.size() == 3);  // records 1-3
  }
  SECTION("a flipped length byte") {
    std::string bytes = original;
    bytes[offsets[2]] ^= 0x40;
    WriteAll(file, bytes);
    ScalarScan scan = ScanScalars({tmp.path()}, {});
    REQUIRE(scan.errors.size() == 1);
    CHECK(scan.errors[0] == file + ":" + std::to_string(offsets[2]) +
                                ": corrupt record: the length's CRC-32C does not match");
  }
  SECTION("data that is not an Event, with valid CRCs") {
    WriteAll(file, original + FrameTfRecord("\x0a\xff\xff"));  // a string longer than the data
    ScalarScan scan = ScanScalars({tmp.path()}, {});
    REQUIRE(scan.errors.size() == 1);
    CHECK(scan.errors[0] == file + ":" + std::to_string(original.size()) + ": not an Event protobuf");
    CHECK(Find(scan, "train/loss", ".")->points.size() == 9);
  }
  SECTION("a record still being written is not an error") {
    for (std::size_t cut : {offsets[5] + 3, offsets[5] + 12, offsets[5] + 20, original.size() - 1}) {
      INFO("cut at " << cut);
      WriteAll(file, original.substr(0, cut));
      ScalarScan scan = ScanScalars({tmp.path()}, {});
      CHECK(scan.errors.empty());
      CHECK(scan.partial == 1);
    }
  }
  SECTION("garbage and empty files") {
    WriteAll(file, std::string(64, '\xff'));
    WriteAll(tmp.path() + "/sub/events.out.tfevents.2.y", "");
    ScalarScan scan = ScanScalars({tmp.path()}, {});
    CHECK(scan.errors.size() == 1);
    CHECK(scan.files.size() == 2);
    CHECK(scan.series.empty());
  }
}

TEST_CASE("tfevents: limits, missing dirs and links out of the dir") {
  TempDir tmp;
  SECTION("a dir that does not exist yet is empty, not an error") {
    ScalarScan scan = ScanScalars({tmp.path() + "/not-yet"}, {});
    CHECK(scan.errors.empty());
    CHECK(scan.files.empty());
  }
  SECTION("symbolic links are not followed") {
    fs::create_directory_symlink(kFixtures + "/torch", tmp.path() + "/linked-dir");
    fs::create_symlink(kFixtures + "/torch/events.out.tfevents.1764201600.node-0.4242.0",
                       tmp.path() + "/events.out.tfevents.9.link");
    ScalarScan scan = ScanScalars({tmp.path()}, {});
    CHECK(scan.files.empty());
  }
  SECTION("many points are thinned, the last kept; files are capped") {
    std::string bytes;
    for (int i = 0; i < 5000; ++i) {
      // Event{step: i, summary{value{tag: "t", simple_value: i}}}
      std::string value = std::string("\x0a\x01t\x15", 4);
      float f = static_cast<float>(i);
      value.append(reinterpret_cast<const char*>(&f), 4);
      std::string summary = "\x0a" + std::string(1, static_cast<char>(value.size())) + value;
      std::string event = "\x10";
      for (std::uint64_t v = static_cast<std::uint64_t>(i);; v >>= 7) {
        if (v < 0x80) {
          event.push_back(static_cast<char>(v));
          break;
        }
        event.push_back(static_cast<char>((v & 0x7f) | 0x80));
      }
      event += "\x2a" + std::string(1, static_cast<char>(summary.size())) + summary;
      bytes += FrameTfRecord(event);
    }
    WriteAll(tmp.path() + "/a/events.out.tfevents.1.h", bytes);
    WriteAll(tmp.path() + "/b/events.out.tfevents.1.h", bytes);
    LogDirLimits limits;
    limits.max_points = 100;
    limits.max_files = 1;
    ScalarScan scan = ScanScalars({tmp.path()}, {}, limits);
    REQUIRE(scan.series.size() == 1);
    CHECK(scan.series[0].run == "a");
    CHECK(scan.series[0].thinned);
    REQUIRE(scan.series[0].points.size() == 100);
    CHECK(scan.series[0].points.front().step == 0);
    CHECK(scan.series[0].points.back().step == 4999);
    CHECK(scan.series[0].points.back().value == 4999.0);
    REQUIRE(scan.errors.size() == 1);
    CHECK(scan.errors[0] == "more than 1 event files: only the first are read");
  }
}

}  // namespace

#ifdef PJEMU_HAVE_TRAINER_EVENTS
namespace testing {
// tfevents_trainer_writer.cc: pjemu-trainer's EventFileWriter writes loss (2.25 at step 10, 0 at
// step 20) and accuracy (0.5 at epoch 1) into dir/log, wall times 1700000001, 02, 03.
std::string WriteTrainerEvents(const std::string& dir);
}  // namespace testing

namespace {
TEST_CASE("tfevents: pjemu-trainer's event files") {
  TempDir tmp;
  REQUIRE(testing::WriteTrainerEvents(tmp.path()) == "");
  ScalarScan scan = ScanScalars({tmp.path()}, {});
  CHECK(scan.errors.empty());
  const ScalarSeries* loss = Find(scan, "loss", "log");
  REQUIRE(loss != nullptr);
  REQUIRE(loss->points.size() == 2);
  CHECK(loss->points[0].value == 2.25);
  CHECK(loss->points[0].wall_time == 1700000002.0);
  CHECK(loss->points[1].step == 20);
  CHECK(loss->points[1].value == 0.0);
  REQUIRE(Find(scan, "accuracy", "log") != nullptr);
}
}  // namespace
#endif

}  // namespace pjemu::ui
