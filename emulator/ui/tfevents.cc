#include "emulator/ui/tfevents.h"

#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <bit>
#include <boost/crc.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

namespace pjemu::ui {
namespace {

namespace fs = std::filesystem;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// CRC-32C (Castagnoli): polynomial 0x1EDC6F41, reflected, initial and final XOR all ones.
using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

constexpr std::size_t kHeaderBytes = 12;  // length + its CRC
constexpr std::size_t kFooterBytes = 4;   // the data's CRC
// A record larger than this is treated as corruption (TensorBoard's scalars are tens of bytes;
// an image summary may be megabytes).
constexpr std::uint64_t kMaxRecordBytes = 256ull << 20;

// Event, Summary, Value and TensorProto field numbers (tensorboard's .proto files).
enum : int {
  kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5,
  kSummaryValue = 1,
  kValueTag = 1, kValueSimple = 2, kValueTensor = 8,
  kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4, kTensorFloatVal = 5,
  kTensorDoubleVal = 6,
  kShapeDim = 2, kDimSize = 1,
};
enum : std::uint64_t { kDtFloat = 1, kDtDouble = 2 };

std::uint32_t Le32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // the project builds for little-endian hosts only
}
std::uint64_t Le64(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
double DoubleOf(std::uint64_t bits) { return std::bit_cast<double>(bits); }
float FloatOf(std::uint32_t bits) { return std::bit_cast<float>(bits); }

bool Parse(UnknownFieldSet& set, std::string_view data) {
  if (data.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return false;
  return set.ParseFromArray(data.data(), static_cast<int>(data.size()));
}

// The last field with `number` and `type`, or null.
const UnknownField* Last(const UnknownFieldSet& set, int number, UnknownField::Type type) {
  const UnknownField* found = nullptr;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() == number && f.type() == type) found = &f;
  }
  return found;
}

// The elements of a repeated fixed-width field, packed (one length-delimited run) or not.
template <typename T>
std::vector<T> Repeated(const UnknownFieldSet& set, int number) {
  std::vector<T> out;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() != number) continue;
    if constexpr (sizeof(T) == 4) {
      if (f.type() == UnknownField::TYPE_FIXED32) out.push_back(FloatOf(f.fixed32()));
    } else {
      if (f.type() == UnknownField::TYPE_FIXED64) out.push_back(DoubleOf(f.fixed64()));
    }
    if (f.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
      const std::string& run = f.length_delimited();
      for (std::size_t at = 0; at + sizeof(T) <= run.size(); at += sizeof(T)) {
        T v;
        std::memcpy(&v, run.data() + at, sizeof(T));
        out.push_back(v);
      }
    }
  }
  return out;
}

// The number of elements a TensorShapeProto describes (1 for a scalar's empty shape).
std::optional<std::uint64_t> Elements(const UnknownField* shape) {
  if (shape == nullptr) return 1;
  UnknownFieldSet set;
  if (!Parse(set, shape->length_delimited())) return std::nullopt;
  std::uint64_t n = 1;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() != kShapeDim || f.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    UnknownFieldSet dim;
    if (!Parse(dim, f.length_delimited())) return std::nullopt;
    const UnknownField* size = Last(dim, kDimSize, UnknownField::TYPE_VARINT);
    n *= size ? size->varint() : 0;
  }
  return n;
}

// The value of a one-element float or double tensor (TensorFlow 2's tf.summary.scalar).
std::optional<double> TensorScalar(std::string_view data) {
  UnknownFieldSet t;
  if (!Parse(t, data)) return std::nullopt;
  const UnknownField* dtype = Last(t, kTensorDtype, UnknownField::TYPE_VARINT);
  std::uint64_t type = dtype ? dtype->varint() : 0;
  if (type != kDtFloat && type != kDtDouble) return std::nullopt;
  if (Elements(Last(t, kTensorShape, UnknownField::TYPE_LENGTH_DELIMITED)) != 1u) return std::nullopt;
  if (const UnknownField* content = Last(t, kTensorContent, UnknownField::TYPE_LENGTH_DELIMITED)) {
    const std::string& bytes = content->length_delimited();
    if (type == kDtFloat && bytes.size() == 4) return FloatOf(Le32(bytes.data()));
    if (type == kDtDouble && bytes.size() == 8) return DoubleOf(Le64(bytes.data()));
  }
  if (type == kDtFloat) {
    auto v = Repeated<float>(t, kTensorFloatVal);
    if (!v.empty()) return v.front();
  } else {
    auto v = Repeated<double>(t, kTensorDoubleVal);
    if (!v.empty()) return v.front();
  }
  return std::nullopt;
}

// A Summary.Value that is a scalar, or nullopt.
std::optional<ScalarValue> DecodeValue(std::string_view data) {
  UnknownFieldSet v;
  if (!Parse(v, data)) return std::nullopt;
  ScalarValue out;
  if (const UnknownField* tag = Last(v, kValueTag, UnknownField::TYPE_LENGTH_DELIMITED)) {
    out.tag = tag->length_delimited();
  }
  if (const UnknownField* simple = Last(v, kValueSimple, UnknownField::TYPE_FIXED32)) {
    out.value = FloatOf(simple->fixed32());
    return out;
  }
  if (const UnknownField* tensor = Last(v, kValueTensor, UnknownField::TYPE_LENGTH_DELIMITED)) {
    if (auto value = TensorScalar(tensor->length_delimited())) {
      out.value = *value;
      return out;
    }
  }
  return std::nullopt;
}

std::string Hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

}  // namespace

std::uint32_t MaskedCrc32c(std::string_view data) {
  Crc32c crc;
  crc.process_bytes(data.data(), data.size());
  std::uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

std::string FrameTfRecord(std::string_view data) {
  std::string out;
  std::uint64_t length = data.size();
  char header[8];
  std::memcpy(header, &length, 8);
  out.append(header, 8);
  std::uint32_t crc = MaskedCrc32c({header, 8});
  out.append(reinterpret_cast<const char*>(&crc), 4);
  out.append(data);
  crc = MaskedCrc32c(data);
  out.append(reinterpret_cast<const char*>(&crc), 4);
  return out;
}

Result<TfEvent> DecodeTfEvent(std::string_view data) {
  UnknownFieldSet event;
  if (!Parse(event, data)) return Status(Code::kInvalid, "not an Event protobuf");
  TfEvent out;
  for (int i = 0; i < event.field_count(); ++i) {
    const UnknownField& f = event.field(i);
    switch (f.number()) {
      case kEventWallTime:
        if (f.type() == UnknownField::TYPE_FIXED64) out.wall_time = DoubleOf(f.fixed64());
        break;
      case kEventStep:
        if (f.type() == UnknownField::TYPE_VARINT) out.step = static_cast<std::int64_t>(f.varint());
        break;
      case kEventFileVersion:
        if (f.type() == UnknownField::TYPE_LENGTH_DELIMITED) out.file_version = f.length_delimited();
        break;
      case kEventSummary: {
        if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED) break;
        UnknownFieldSet summary;
        if (!Parse(summary, f.length_delimited())) {
          return Status(Code::kInvalid, "Event.summary is not a Summary protobuf");
        }
        for (int j = 0; j < summary.field_count(); ++j) {
          const UnknownField& value = summary.field(j);
          if (value.number() != kSummaryValue ||
              value.type() != UnknownField::TYPE_LENGTH_DELIMITED) {
            continue;
          }
          if (auto scalar = DecodeValue(value.length_delimited())) {
            out.scalars.push_back(std::move(*scalar));
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

RecordScan ScanTfRecords(
    std::string_view bytes,
    const std::function<std::string(std::string_view, std::size_t)>& on_record) {
  RecordScan scan;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < kHeaderBytes) {
      scan.partial = true;
      break;
    }
    std::uint64_t length = Le64(bytes.data() + at);
    std::uint32_t length_crc = Le32(bytes.data() + at + 8);
    if (MaskedCrc32c(bytes.substr(at, 8)) != length_crc) {
      scan.error = std::to_string(at) + ": corrupt record: the length's CRC-32C does not match";
      break;
    }
    if (length > kMaxRecordBytes) {
      scan.error = std::to_string(at) + ": corrupt record: length " + std::to_string(length) +
                   " is over " + std::to_string(kMaxRecordBytes);
      break;
    }
    if (bytes.size() - at - kHeaderBytes < length + kFooterBytes) {
      scan.partial = true;
      break;
    }
    std::string_view data = bytes.substr(at + kHeaderBytes, length);
    std::uint32_t data_crc = Le32(bytes.data() + at + kHeaderBytes + length);
    std::uint32_t want = MaskedCrc32c(data);
    if (want != data_crc) {
      scan.error = std::to_string(at) + ": corrupt record: the data's CRC-32C is " + Hex(data_crc) +
                   ", expected " + Hex(want);
      break;
    }
    if (std::string bad = on_record(data, at); !bad.empty()) {
      scan.error = std::to_string(at) + ": " + bad;
      break;
    }
    ++scan.records;
    at += kHeaderBytes + length + kFooterBytes;
    scan.end = at;
  }
  return scan;
}

namespace {

std::string ReadPrefix(const fs::path& path, std::size_t max_bytes, bool& cut) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  cut = text.size() == max_bytes && in.peek() != std::char_traits<char>::eof();
  return text;
}

// The event files under dir, in path order, at most `room` of them.
std::vector<fs::path> EventFiles(const fs::path& dir, const LogDirLimits& limits, std::size_t room,
                                 bool& capped) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it.depth() >= limits.max_depth) it.disable_recursion_pending();
    std::error_code sec;
    if (!it->is_regular_file(sec) || it->is_symlink(sec)) continue;
    if (it->path().filename().string().find("tfevents") == std::string::npos) continue;
    files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  if (files.size() > room) {
    files.resize(room);
    capped = true;
  }
  return files;
}

// Keeps at most max points: evenly spaced, the last one always kept.
bool Thin(std::vector<ScalarPoint>& points, std::size_t max) {
  if (max < 2 || points.size() <= max) return false;
  std::vector<ScalarPoint> kept;
  kept.reserve(max);
  double stride = static_cast<double>(points.size() - 1) / static_cast<double>(max - 1);
  for (std::size_t i = 0; i < max; ++i) {
    kept.push_back(points[static_cast<std::size_t>(static_cast<double>(i) * stride + 0.5)]);
  }
  kept.back() = points.back();
  points = std::move(kept);
  return true;
}

}  // namespace

ScalarScan ScanScalars(const std::vector<std::string>& dirs, const std::vector<std::string>& labels,
                       const LogDirLimits& limits) {
  ScalarScan out;
  std::map<std::pair<std::string, std::string>, std::vector<ScalarPoint>> series;  // (tag, run)
  bool capped = false;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    fs::path dir(dirs[d]);
    std::string label = d < labels.size() ? labels[d] : "dir" + std::to_string(d);
    std::size_t room = limits.max_files - std::min(limits.max_files, out.files.size());
    for (const fs::path& file : EventFiles(dir, limits, room, capped)) {
      out.files.push_back(file.string());
      std::string run = file.parent_path().lexically_relative(dir).generic_string();
      if (dirs.size() > 1) run = run == "." ? label : label + "/" + run;
      bool cut = false;
      std::string bytes = ReadPrefix(file, limits.max_file_bytes, cut);
      RecordScan scan = ScanTfRecords(bytes, [&](std::string_view data, std::size_t) {
        Result<TfEvent> event = DecodeTfEvent(data);
        if (!event.ok()) return event.status().message();
        for (const ScalarValue& v : event->scalars) {
          series[{v.tag, run}].push_back({event->step, v.value, event->wall_time});
        }
        return std::string();
      });
      if (!scan.error.empty()) out.errors.push_back(file.string() + ":" + scan.error);
      if (cut) {
        out.errors.push_back(file.string() + ": only the first " +
                             std::to_string(limits.max_file_bytes) + " bytes are read");
      } else if (scan.partial) {
        ++out.partial;
      }
    }
  }
  if (capped) {
    out.errors.push_back("more than " + std::to_string(limits.max_files) +
                         " event files: only the first are read");
  }
  for (auto& [key, points] : series) {
    std::stable_sort(points.begin(), points.end(),
                     [](const ScalarPoint& a, const ScalarPoint& b) { return a.step < b.step; });
    ScalarSeries s{key.second, key.first, std::move(points), false};
    s.thinned = Thin(s.points, limits.max_points);
    out.series.push_back(std::move(s));
  }
  return out;
}

}  // namespace pjemu::ui
