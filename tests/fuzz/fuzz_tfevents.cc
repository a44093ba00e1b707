// Fuzz target: TensorBoard event files as the console reads them from a job's log dir (any
// bytes a training script, or a disk error, leaves there).
// Invariants: no crash, no unbounded allocation from a hostile length; the framing scan never
// reports an end past the input; input it reads through to the end without error or partial
// record is exactly its records; each record's data decodes or is refused with kInvalid.
#include <cstdint>

#include "emulator/ui/tfevents.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {

int FuzzTfEvents(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes = AsText(data, size);
  std::size_t records = 0;
  ui::RecordScan scan = ui::ScanTfRecords(bytes, [&](std::string_view record, std::size_t at) {
    FUZZ_CHECK(at + 16 + record.size() <= bytes.size());
    ++records;
    auto event = ui::DecodeTfEvent(record);
    if (!event.ok()) FUZZ_CHECK(event.status().code() == Code::kInvalid);
    return std::string();
  });
  FUZZ_CHECK(scan.end <= size);
  FUZZ_CHECK(scan.records == records);
  if (scan.error.empty() && !scan.partial) FUZZ_CHECK(scan.end == size);
  // The input as one Event's data, and framed as one valid record.
  auto event = ui::DecodeTfEvent(bytes);
  if (!event.ok()) FUZZ_CHECK(event.status().code() == Code::kInvalid);
  std::string framed = ui::FrameTfRecord(bytes);
  ui::RecordScan one = ui::ScanTfRecords(framed, [&](std::string_view record, std::size_t) {
    FUZZ_CHECK(record == bytes);
    return std::string();
  });
  FUZZ_CHECK(one.records == 1 && one.error.empty() && !one.partial);
  return 0;
}

}  // namespace pjemu::fuzz
