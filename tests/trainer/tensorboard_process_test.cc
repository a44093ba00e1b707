// pjemu-trainer's TensorBoard events files end to end: a 2-rank run with both ranks writing
// into one --dir gives one events file per rank (named for its pid), whose "loss" scalars are
// the rank's printed loss lines at the reference's steps (epoch * batches + batch) and whose
// "accuracy" is the printed accuracy at step = epoch; python3-protobuf reads them too.
// Label: slow (runs the trainer on the Debian FashionMNIST files).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "tests/support/temp_dir.h"
#include "tf_event_reader.h"
#include "trainer/exit_codes.h"
#include "trainer_process.h"

namespace pjemu::trainer {
namespace {

namespace fs = std::filesystem;

constexpr char kData[] = "/usr/share/datasets/fashion-mnist";

std::string Format4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", v);
  return buf;
}

// The value after "loss=" or "accuracy=" in each line that has it.
std::vector<std::string> Printed(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& l : testing::Lines(text)) {
    auto at = l.find(key);
    if (at != std::string::npos && (at == 0 || l[at - 1] == '\t')) {
      out.push_back(l.substr(at + key.size()));
    }
  }
  return out;
}

TEST_CASE("each rank writes its loss and accuracy as TensorBoard scalars", "[trainer][slow]") {
  if (!fs::exists(std::string(kData) + "/train-images-idx3-ubyte.gz")) return;
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  const int port = testing::FreePort();
  std::vector<testing::Child> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(testing::Start({"--max-steps", "21", "--dir", dir + "/logs"},
                                   {{"RANK", std::to_string(r)},
                                    {"WORLD_SIZE", "2"},
                                    {"MASTER_ADDR", "127.0.0.1"},
                                    {"MASTER_PORT", std::to_string(port)},
                                    {"OMP_NUM_THREADS", "1"}},
                                   dir + "/rank" + std::to_string(r) + ".log"));
  }
  const pid_t pids[2] = {ranks[0].pid, ranks[1].pid};  // Wait() clears Child::pid
  for (auto& c : ranks) REQUIRE(testing::Wait(c, 180) == kExitOk);
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    const std::string out = testing::ReadFile(dir + "/rank" + std::to_string(r) + ".log");
    const auto losses = Printed(out, "loss=");
    const auto accuracy = Printed(out, "accuracy=");
    REQUIRE(losses.size() == 3);  // batches 0, 10, 20
    REQUIRE(accuracy.size() == 1);
    std::string path;
    for (const auto& e : fs::directory_iterator(dir + "/logs")) {
      const std::string name = e.path().filename().string();
      if (name.find("tfevents") != std::string::npos &&
          name.find("." + std::to_string(pids[r]) + ".") != std::string::npos) {
        path = e.path().string();
      }
    }
    REQUIRE_FALSE(path.empty());
    auto split = testing::SplitRecords(testing::ReadBytes(path));
    REQUIRE(split.error.empty());
    REQUIRE(split.records.size() == 5);  // file_version, 3 x loss, accuracy
    std::vector<testing::DecodedEvent> ev;
    for (const auto& rec : split.records) {
      auto d = testing::DecodeEvent(rec.data);
      REQUIRE(d.error.empty());
      ev.push_back(d.event);
    }
    CHECK(ev[0].file_version == std::string("brain.Event:2"));
    for (int i = 0; i < 3; ++i) {
      // 60000 / 2 ranks / 64 per batch -> 469 batches: step = 1 * 469 + batch.
      CHECK(ev[i + 1].step == 469 + 10 * i);
      REQUIRE(ev[i + 1].values.size() == 1);
      CHECK(ev[i + 1].values[0].tag == "loss");
      CHECK(Format4(*ev[i + 1].values[0].simple_value) == losses[i]);
    }
    CHECK(ev[4].step == 1);
    CHECK(ev[4].values.at(0).tag == "accuracy");
    CHECK(Format4(*ev[4].values.at(0).simple_value) == accuracy[0]);
  }
  // The independent reader (python3-protobuf, python3-crc32c) accepts both files.
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string script =
        std::string(PJEMU_SOURCE_DIR) + "/tests/trainer/tensorboard_reader.py";
    const std::string logs = dir + "/logs";
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execl("/usr/bin/python3", "/usr/bin/python3", script.c_str(), logs.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace pjemu::trainer
