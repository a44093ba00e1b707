#include "trainer/tf_event.h"

#include <bit>

#include "trainer/crc32c.h"

namespace pjemu::trainer {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutKey(std::string& out, int field, int wire_type) {
  PutVarint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

// Little-endian, as protobuf's fixed32/fixed64 and TFRecord's integers.
template <typename T>
void PutLittleEndian(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutBytesField(std::string& out, int field, std::string_view bytes) {
  PutKey(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

// Event fields 1 and 2; proto3 leaves out a zero wall_time (all bits zero) and a zero step.
std::string EventHeader(double wall_time, int64_t step) {
  std::string out;
  const uint64_t wall_bits = std::bit_cast<uint64_t>(wall_time);
  if (wall_bits != 0) {
    PutKey(out, 1, kFixed64);
    PutLittleEndian(out, wall_bits);
  }
  if (step != 0) {
    PutKey(out, 2, kVarint);
    PutVarint(out, static_cast<uint64_t>(step));  // int64: negative -> 10 bytes, as protobuf
  }
  return out;
}

}  // namespace

std::string EncodeFileVersionEvent(double wall_time) {
  std::string out = EventHeader(wall_time, 0);
  PutBytesField(out, 3, kEventFileVersion);  // in a oneof: written even if it were empty
  return out;
}

std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string v;
  if (!tag.empty()) PutBytesField(v, 1, tag);
  PutKey(v, 2, kFixed32);  // simple_value is in a oneof: written even when 0
  PutLittleEndian(v, std::bit_cast<uint32_t>(value));
  std::string summary;
  PutBytesField(summary, 1, v);
  std::string out = EventHeader(wall_time, step);
  PutBytesField(out, 5, summary);
  return out;
}

std::string FrameTfRecord(std::string_view data) {
  std::string header;
  PutLittleEndian(header, static_cast<uint64_t>(data.size()));
  std::string out = header;
  PutLittleEndian(out, MaskedCrc32c(header));
  out.append(data);
  PutLittleEndian(out, MaskedCrc32c(data));
  return out;
}

}  // namespace pjemu::trainer
