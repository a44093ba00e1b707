// TensorBoard events files, byte for byte against the format: CRC-32C test vectors and mask,
// Event encodings (hand-derived bytes, confirmed with python3-protobuf when written), TFRecord
// framing (length, both masked CRCs), files written with a fake clock and decoded by an
// independent reader (tf_event_reader.h), and the differential check with Debian's
// python3-protobuf and python3-crc32c (tensorboard_reader.py). No Torch needed.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tf_event_reader.h"
#include "trainer/crc32c.h"
#include "trainer/event_file_writer.h"
#include "trainer/tf_event.h"

namespace pjemu::trainer {
namespace {

namespace fs = std::filesystem;
using testing::BitwiseCrc32c;
using testing::DecodeEvent;
using testing::Mask;
using testing::ReadBytes;
using testing::SplitRecords;

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find("tfevents") != std::string::npos) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A clock that returns the given times in turn (then repeats the last).
EventFileWriter::WallClock Times(std::vector<double> times) {
  auto next = std::make_shared<size_t>(0);
  return [times, next]() {
    const double t = times[std::min(*next, times.size() - 1)];
    ++*next;
    return t;
  };
}

TEST_CASE("CRC-32C matches the standard test vectors", "[tensorboard]") {
  // "123456789" is the CRC catalogue's check value; the 32-byte vectors are RFC 3720 B.4's.
  CHECK(Crc32c("123456789") == 0xE3069283u);
  CHECK(Crc32c("") == 0u);
  CHECK(Crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(Crc32c(std::string(32, '\xFF')) == 0x62A8AB43u);
  std::string up, down;
  for (int i = 0; i < 32; ++i) {
    up.push_back(static_cast<char>(i));
    down.push_back(static_cast<char>(31 - i));
  }
  CHECK(Crc32c(up) == 0x46DD794Eu);
  CHECK(Crc32c(down) == 0x113FDB5Cu);
  // Continuing a CRC over a split buffer gives the CRC of the whole.
  CHECK(Crc32c("56789", Crc32c("1234")) == 0xE3069283u);
  // The table version equals the test's bit-by-bit one on every single byte and a long run.
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    REQUIRE(Crc32c(one) == BitwiseCrc32c(one));
    all += one;
  }
  CHECK(Crc32c(all) == BitwiseCrc32c(all));
}

TEST_CASE("the TFRecord mask rotates right by 15 and adds 0xA282EAD8", "[tensorboard]") {
  CHECK(MaskCrc32c(0) == 0xA282EAD8u);
  CHECK(MaskCrc32c(0xE3069283u) == 0xC78AB0E5u);  // python3-crc32c + the mask, by hand
  CHECK(MaskCrc32c(0x00008000u) == 0xA282EAD9u);  // bit 15 rotates to bit 0
  CHECK(MaskCrc32c(0x00000001u) == 0xA284EAD8u);  // bit 0 rotates to bit 17
  CHECK(MaskedCrc32c("123456789") == 0xC78AB0E5u);
}

TEST_CASE("Event encodings equal protobuf's bytes", "[tensorboard]") {
  // wall_time 1700000000.5 = 0x41D954FC40200000 (fixed64, key 0x09); file_version key 0x1A.
  CHECK(Hex(EncodeFileVersionEvent(1700000000.5)) ==
        "0900002040fc54d941"
        "1a0d" +
            Hex("brain.Event:2"));
  // step 469 = varint d5 03 (key 0x10); summary (key 0x2A) { value (0x0A) { tag (0x0A) "loss",
  // simple_value (0x15) 2.2965f = 0x4012F9DB } }.
  CHECK(Hex(EncodeScalarEvent(1700000001.25, 469, "loss", 2.2965f)) ==
        "0900005040fc54d941"
        "10d503"
        "2a0d"
        "0a0b"
        "0a04" +
            Hex("loss") + "15dbf91240");
  // proto3: a zero step and a zero wall_time are left out; simple_value (in a oneof) is kept
  // even when 0; a negative step is a 10-byte varint.
  CHECK(Hex(EncodeScalarEvent(0, 0, "a", 0.0f)) ==
        "2a0a"
        "0a08"
        "0a0161"
        "1500000000");
  CHECK(Hex(EncodeScalarEvent(1.0, -1, "x", 0.0f)) ==
        "09000000000000f03f"
        "10ffffffffffffffffff01"
        "2a0a"
        "0a08"
        "0a0178"
        "1500000000");
  CHECK(Hex(EncodeFileVersionEvent(0)) == "1a0d" + Hex("brain.Event:2"));
  // A 200-byte tag: the length varints grow to two bytes (c8 01) at every level.
  const std::string tag(200, 't');
  const std::string long_event = EncodeScalarEvent(0, 1, tag, 1.0f);
  CHECK(Hex(long_event.substr(0, 10)) ==
        "1001"
        "2ad301"
        "0ad001"
        "0ac8");
  auto decoded = DecodeEvent(long_event);
  REQUIRE(decoded.error.empty());
  CHECK(decoded.event.values.at(0).tag == tag);
}

TEST_CASE("TFRecord framing: length, masked CRC of the length, data, masked CRC of the data",
          "[tensorboard]") {
  const std::string data = EncodeFileVersionEvent(1700000000.5);
  REQUIRE(data.size() == 24);
  // CRCs computed with python3-crc32c when this test was written.
  CHECK(Hex(FrameTfRecord(data)) ==
        "1800000000000000"
        "a37f4b22" +
            Hex(data) + "2b353110");
  const std::string scalar = EncodeScalarEvent(1700000001.25, 469, "loss", 2.2965f);
  CHECK(Hex(FrameTfRecord(scalar)) ==
        "1b00000000000000"
        "1a0d9e13" +
            Hex(scalar) + "576913ca");
  // An empty record: 8 zero bytes, their masked CRC, nothing, the masked CRC of nothing.
  CHECK(Hex(FrameTfRecord("")) ==
        "0000000000000000"
        "29039807"
        "d8ea82a2");
  // The independent reader accepts the frames and rejects any flipped bit in them.
  const std::string framed = FrameTfRecord(scalar);
  auto ok = SplitRecords(framed);
  REQUIRE(ok.error.empty());
  REQUIRE(ok.records.size() == 1);
  CHECK(ok.records[0].length == scalar.size());
  CHECK(ok.records[0].length_crc == Mask(BitwiseCrc32c(framed.substr(0, 8))));
  CHECK(ok.records[0].data_crc == Mask(BitwiseCrc32c(scalar)));
  for (size_t i = 0; i < framed.size(); ++i) {
    std::string bad = framed;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    INFO("byte " << i);
    CHECK_FALSE(SplitRecords(bad).error.empty());
  }
}

TEST_CASE("EventFileName is tensorboard's: 10-digit seconds, host, pid, file number",
          "[tensorboard]") {
  CHECK(EventFileName(1700000000, "node-1", 4242, 0) ==
        "events.out.tfevents.1700000000.node-1.4242.0");
  CHECK(EventFileName(42, "h", 1, 3) == "events.out.tfevents.0000000042.h.1.3");
}

TEST_CASE("an events file decodes to the scalars written, in order", "[tensorboard]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp / "logs";
  EventFileWriter w(Times({1700000000.75, 1700000001.5, 1700000002.25, 1700000003.0}));
  REQUIRE(w.Open(dir, "pod-0", 77).ok());
  REQUIRE(w.AddScalar("loss", 2.2965f, 469).ok());
  REQUIRE(w.AddScalar("loss", 0.25f, 479).ok());
  REQUIRE(w.AddScalar("accuracy", 0.6954f, 1).ok());
  const std::string name = fs::path(w.path()).filename().string();
  CHECK(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.1700000000\.pod-0\.77\.\d+)")));
  REQUIRE(EventFiles(dir) == std::vector<std::string>{w.path()});

  auto split = SplitRecords(ReadBytes(w.path()));
  REQUIRE(split.error.empty());
  REQUIRE(split.records.size() == 4);
  std::vector<testing::DecodedEvent> ev;
  for (const auto& r : split.records) {
    auto d = DecodeEvent(r.data);
    REQUIRE(d.error.empty());
    ev.push_back(d.event);
  }
  CHECK(ev[0].file_version == std::string("brain.Event:2"));
  CHECK(ev[0].wall_time == 1700000000.75);
  CHECK(ev[0].step == 0);
  CHECK_FALSE(ev[0].has_summary);
  struct Want {
    double wall;
    int64_t step;
    const char* tag;
    float value;
  } want[] = {{1700000001.5, 469, "loss", 2.2965f},
              {1700000002.25, 479, "loss", 0.25f},
              {1700000003.0, 1, "accuracy", 0.6954f}};
  for (int i = 0; i < 3; ++i) {
    INFO("record " << i + 1);
    CHECK_FALSE(ev[i + 1].file_version);
    CHECK(ev[i + 1].wall_time == want[i].wall);
    CHECK(ev[i + 1].step == want[i].step);
    REQUIRE(ev[i + 1].values.size() == 1);
    CHECK(ev[i + 1].values[0].tag == want[i].tag);
    REQUIRE(ev[i + 1].values[0].simple_value);
    CHECK(*ev[i + 1].values[0].simple_value == want[i].value);  // bit-exact float
  }
  // The file is flushed after each record: its size is the sum of the frames.
  CHECK(fs::file_size(w.path()) == ReadBytes(w.path()).size());
}

TEST_CASE("EventFileWriter refuses bad hostnames, a second Open and writes before Open",
          "[tensorboard]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  EventFileWriter unopened;
  CHECK_FALSE(unopened.AddScalar("loss", 1, 1).ok());
  for (const char* host : {"", "a/b", ".", ".."}) {
    EventFileWriter w;
    INFO(host);
    CHECK_FALSE(w.Open(dir, host, 1).ok());
  }
  EventFileWriter w;
  REQUIRE(w.Open(dir, "h", 1).ok());
  CHECK_FALSE(w.Open(dir, "h", 1).ok());
  // Two writers of one process (or two ranks sharing --dir) in the same second: two files.
  EventFileWriter other(Times({SystemWallTime()}));
  REQUIRE(other.Open(dir, "h", 1).ok());
  CHECK(other.path() != w.path());
  CHECK(EventFiles(dir).size() == 2);
  // A folder that cannot be created.
  EventFileWriter blocked;
  CHECK_FALSE(blocked.Open(w.path() + "/sub", "h", 1).ok());
}

// Runs argv (no shell) and returns {exit code, stdout}.
std::pair<int, std::string> Run(const std::vector<std::string>& argv) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

TEST_CASE("python3-protobuf and python3-crc32c read the file as written", "[tensorboard]") {
  const std::string script = std::string(PJEMU_SOURCE_DIR) + "/tests/trainer/tensorboard_reader.py";
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  EventFileWriter w(Times({1700000000.5, 1700000001.25, 1700000002.0, 1700000003.5}));
  REQUIRE(w.Open(dir, "pod-1", 4242).ok());
  REQUIRE(w.AddScalar("loss", 2.2965f, 469).ok());
  REQUIRE(w.AddScalar("loss", 0.0f, 0).ok());
  REQUIRE(w.AddScalar("accuracy", 0.6954f, 1).ok());
  auto [rc, out] = Run({"/usr/bin/python3", script, dir});
  if (rc == 3) {
    FAIL("python3-protobuf or python3-crc32c missing (tools/setup installs them)");
  }
  REQUIRE(rc == 0);
  const std::string file = fs::path(w.path()).filename().string();
  // json.dumps of the float32 values widened to double, as protobuf hands them to Python.
  const std::string want =
      R"({"file": ")" + file +
      R"(", "wall_time": 1700000000.5, "step": 0, "file_version": "brain.Event:2"})"
      "\n"
      R"({"file": ")" +
      file +
      R"(", "wall_time": 1700000001.25, "step": 469, "tag": "loss", "value": 2.2964999675750732})"
      "\n"
      R"({"file": ")" +
      file +
      R"(", "wall_time": 1700000002.0, "step": 0, "tag": "loss", "value": 0.0})"
      "\n"
      R"({"file": ")" +
      file +
      R"(", "wall_time": 1700000003.5, "step": 1, "tag": "accuracy", "value": 0.6953999996185303})"
      "\n";
  CHECK(out == want);
  // And it rejects a file with a flipped data byte.
  std::string bytes = ReadBytes(w.path());
  bytes[bytes.size() - 6] ^= 1;
  const std::string bad = dir + "/bad/" + file;
  fs::create_directories(dir + "/bad");
  {
    std::FILE* f = std::fopen(bad.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  CHECK(Run({"/usr/bin/python3", script, bad}).first == 1);
}

}  // namespace
}  // namespace pjemu::trainer
