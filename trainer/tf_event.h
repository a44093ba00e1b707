// TensorBoard event records: the Event protobuf messages a SummaryWriter writes for scalars, and
// the TFRecord framing around each. Hand-encoded (the five fields below) because the trainer
// builds against LibTorch alone: Debian's libprotobuf-dev has no tensorboard .proto files, and
// linking libprotobuf next to a pip wheel's LibTorch (which carries its own protobuf) risks two
// copies of it in one process. The bytes equal what protobuf serializes for the same message
// (fields in number order, proto3 defaults left out); tests/trainer checks that against Debian's
// python3-protobuf.
//
// tensorboard's event.proto / summary.proto, the fields used:
//   Event   { double wall_time = 1; int64 step = 2; oneof what { string file_version = 3;
//             Summary summary = 5; } }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; oneof value { float simple_value = 2; } }
// TFRecord: uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes, the data,
// uint32 masked CRC-32C of the data.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pjemu::trainer {

// The file_version of the first record of every events file.
inline constexpr std::string_view kEventFileVersion = "brain.Event:2";

// Event{wall_time, file_version: "brain.Event:2"}: the first record of a file (step 0).
std::string EncodeFileVersionEvent(double wall_time);

// Event{wall_time, step, summary{value{tag, simple_value}}}: one add_scalar(tag, value, step).
std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value);

// data framed as one TFRecord: length, masked CRC of the length, data, masked CRC of the data.
std::string FrameTfRecord(std::string_view data);

}  // namespace pjemu::trainer
