#include "tf_event_reader.h"

#include <bit>
#include <fstream>
#include <sstream>

namespace pjemu::trainer::testing {
namespace {

uint64_t LittleEndian(const std::string& s, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

// A protobuf wire-format cursor over one message.
class Wire {
 public:
  explicit Wire(const std::string& s) : s_(s) {}
  bool done() const { return pos_ >= s_.size(); }
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= s_.size()) return false;
      const auto b = static_cast<unsigned char>(s_[pos_++]);
      v |= uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fixed(size_t n, uint64_t& v) {
    if (s_.size() - pos_ < n) return false;
    v = LittleEndian(s_, pos_, n);
    pos_ += n;
    return true;
  }
  bool Bytes(std::string& out) {
    uint64_t n;
    if (!Varint(n) || s_.size() - pos_ < n) return false;
    out = s_.substr(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

std::string DecodeValue(const std::string& data, DecodedEvent::Value& v) {
  Wire w(data);
  while (!w.done()) {
    uint64_t key, x;
    if (!w.Varint(key)) return "Value: truncated key";
    if (key == (1 << 3 | 2)) {
      if (!w.Bytes(v.tag)) return "Value.tag: truncated";
    } else if (key == (2 << 3 | 5)) {
      if (!w.Fixed(4, x)) return "Value.simple_value: truncated";
      v.simple_value = std::bit_cast<float>(static_cast<uint32_t>(x));
    } else {
      return "Value: unexpected key " + std::to_string(key);
    }
  }
  return "";
}

}  // namespace

uint32_t BitwiseCrc32c(const std::string& data) {
  uint32_t crc = 0xFFFFFFFF;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0x82F63B78 & (0u - (crc & 1)));
  }
  return ~crc;
}

uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

Records SplitRecords(const std::string& bytes) {
  Records out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const std::string where =
        "record " + std::to_string(out.records.size()) + " at byte " + std::to_string(pos) + ": ";
    if (bytes.size() - pos < 12) {
      out.error = where + "truncated header";
      return out;
    }
    DecodedRecord r;
    r.length = LittleEndian(bytes, pos, 8);
    r.length_crc = static_cast<uint32_t>(LittleEndian(bytes, pos + 8, 4));
    if (r.length_crc != Mask(BitwiseCrc32c(bytes.substr(pos, 8)))) {
      out.error = where + "length CRC mismatch";
      return out;
    }
    if (bytes.size() - pos - 12 < r.length + 4) {
      out.error = where + "truncated data";
      return out;
    }
    r.data = bytes.substr(pos + 12, r.length);
    r.data_crc = static_cast<uint32_t>(LittleEndian(bytes, pos + 12 + r.length, 4));
    if (r.data_crc != Mask(BitwiseCrc32c(r.data))) {
      out.error = where + "data CRC mismatch";
      return out;
    }
    pos += 16 + r.length;
    out.records.push_back(std::move(r));
  }
  return out;
}

EventOrError DecodeEvent(const std::string& data) {
  EventOrError out;
  DecodedEvent& e = out.event;
  Wire w(data);
  while (!w.done()) {
    uint64_t key, x;
    std::string bytes;
    if (!w.Varint(key)) return {e, "Event: truncated key"};
    if (key == (1 << 3 | 1)) {
      if (!w.Fixed(8, x)) return {e, "Event.wall_time: truncated"};
      e.wall_time = std::bit_cast<double>(x);
    } else if (key == (2 << 3 | 0)) {
      if (!w.Varint(x)) return {e, "Event.step: truncated"};
      e.step = static_cast<int64_t>(x);
    } else if (key == (3 << 3 | 2)) {
      if (!w.Bytes(bytes)) return {e, "Event.file_version: truncated"};
      e.file_version = bytes;
    } else if (key == (5 << 3 | 2)) {
      if (!w.Bytes(bytes)) return {e, "Event.summary: truncated"};
      e.has_summary = true;
      Wire s(bytes);
      while (!s.done()) {
        std::string value;
        if (!s.Varint(key) || key != (1 << 3 | 2) || !s.Bytes(value)) {
          return {e, "Summary: not a list of values"};
        }
        e.values.emplace_back();
        std::string err = DecodeValue(value, e.values.back());
        if (!err.empty()) return {e, err};
      }
    } else {
      return {e, "Event: unexpected key " + std::to_string(key)};
    }
  }
  return out;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pjemu::trainer::testing
