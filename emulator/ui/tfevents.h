// TensorBoard event files (`*tfevents*`) -> the scalars the console's TensorBoard page charts.
// Any writer's files: torch.utils.tensorboard, tensorboardX, TensorFlow 2 (scalars as float
// tensors) and pjemu-trainer's (trainer/event_file_writer.h).
//
// Format: a file is a run of TFRecords: uint64 length (little-endian), uint32 masked CRC-32C of
// those 8 bytes, the data, uint32 masked CRC-32C of the data (mask: rotate right 15, add
// 0xA282EAD8). Each record's data is an `Event` protobuf; the fields read are
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; TensorProto tensor = 8; }
//   TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2; bytes tensor_content = 4;
//                 repeated float float_val = 5; repeated double double_val = 6; }
// A Value counts as a scalar when it has simple_value, or a tensor of one DT_FLOAT or DT_DOUBLE
// element; other values (images, histograms, text) are skipped.
// Libraries, not hand-written codecs: the CRC is Boost.CRC's, the protobuf wire format is read
// with libprotobuf's UnknownFieldSet (no .proto files or code generation needed).
//
// Errors: a record whose CRC does not match, or whose data is not an Event, ends the reading of
// that file with an error "<file>:<offset>: <what>" (the offset of the record); the scalars read
// before it are kept. A record cut short at the end of a file is where a writer is still writing:
// not an error, reading stops there (`partial` counts such files).
// Thread safety: pure functions of the files' contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::ui {

struct ScalarValue {
  std::string tag;
  double value = 0;
};

struct TfEvent {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string file_version;           // "brain.Event:2" in a file's first record
  std::vector<ScalarValue> scalars;   // the summary's scalar values
};

// TFRecord's masked CRC-32C of data.
std::uint32_t MaskedCrc32c(std::string_view data);

// Frames data as one TFRecord (for tests and fixtures).
std::string FrameTfRecord(std::string_view data);

// Decodes one Event; kInvalid (with the reason) when data is not one.
Result<TfEvent> DecodeTfEvent(std::string_view data);

// How the framing of `bytes` ended.
struct RecordScan {
  std::size_t records = 0;
  std::size_t end = 0;          // offset after the last whole, valid record
  bool partial = false;         // a record cut short at the end
  std::string error;            // "<offset>: <what>" on corruption; "" otherwise
};

// Calls on_record(data, offset) for each valid record in order, stopping at the first corrupt
// one. on_record may return a non-empty string to report that the record's data is bad (it
// becomes the error, at the record's offset, and the scan stops).
RecordScan ScanTfRecords(std::string_view bytes,
                         const std::function<std::string(std::string_view, std::size_t)>& on_record);

struct ScalarPoint {
  std::int64_t step = 0;
  double value = 0;
  double wall_time = 0;
};

struct LogDirLimits {
  std::size_t max_files = 256;                  // event files read per scan
  std::size_t max_file_bytes = 64 << 20;        // a larger file's first bytes only
  std::size_t max_points = 2000;                // per series: evenly thinned, last kept
  int max_depth = 8;                            // folders below a log dir
};

struct ScalarSeries {
  std::string run;  // the event file's folder relative to its log dir ("." for the dir itself)
  std::string tag;
  std::vector<ScalarPoint> points;  // by step (stable: file order for equal steps)
  bool thinned = false;
};

struct ScalarScan {
  std::vector<ScalarSeries> series;   // by tag, then run
  std::vector<std::string> files;     // the event files read, absolute
  std::vector<std::string> errors;    // "<file>:<offset>: <what>", a missing dir, limits hit
  std::size_t partial = 0;            // files whose last record is still being written
};

// Reads every regular file whose name contains "tfevents" under each dir (recursively, not
// following symbolic links out of it), in path order. A dir that does not exist yet adds no
// error (the job has not written); `run` names are prefixed with the dir's label when several
// dirs are given (labels[i], else "dir<i>").
ScalarScan ScanScalars(const std::vector<std::string>& dirs, const std::vector<std::string>& labels,
                       const LogDirLimits& limits = {});

}  // namespace pjemu::ui
