// Test helper: decodes TensorBoard events files independently of the trainer's encoder (a
// generic protobuf wire-format walk, the CRC-32C recomputed bit by bit), so the tests check the
// writer's bytes against the format rather than against itself. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pjemu::trainer::testing {

// One decoded Event. Fields left out of the message keep their proto3 defaults.
struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::optional<std::string> file_version;
  struct Value {
    std::string tag;
    std::optional<float> simple_value;
  };
  std::vector<Value> values;  // summary.value
  bool has_summary = false;
};

struct DecodedRecord {
  uint64_t length = 0;
  uint32_t length_crc = 0;  // as stored (masked)
  uint32_t data_crc = 0;    // as stored (masked)
  std::string data;
};

// CRC-32C, bit by bit (the reflected Castagnoli polynomial), and TFRecord's mask.
uint32_t BitwiseCrc32c(const std::string& data);
uint32_t Mask(uint32_t crc);

// Splits bytes into TFRecords; an error string names the first record whose length is
// truncated or whose stored CRCs differ from the recomputed masked ones.
struct Records {
  std::vector<DecodedRecord> records;
  std::string error;  // empty: all framing and CRCs good
};
Records SplitRecords(const std::string& bytes);

// Decodes an Event; an error for an unknown field number, a wrong wire type or a truncation.
struct EventOrError {
  DecodedEvent event;
  std::string error;
};
EventOrError DecodeEvent(const std::string& data);

std::string ReadBytes(const std::string& path);

}  // namespace pjemu::trainer::testing
