// LogStream: the body of GET .../pods/{name}/log, read from the CRI-format file that
// api::PodLogs names. Applies tailLines, sinceSeconds/sinceTime,
// timestamps and limitBytes; with follow it keeps reading as the file grows and ends when the
// container instance stops running, the pod is deleted, or the container restarts.
// Thread safety: one reader at a time (the session's strand); PodLogs is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/common/clock.h"

namespace pjemu::apiserver {

struct LogOptions {
  bool follow = false;
  bool timestamps = false;
  std::optional<std::int64_t> tail_lines;
  std::optional<Time> since;  // from sinceTime, or now - sinceSeconds
  std::optional<std::int64_t> limit_bytes;
};

// One record of a CRI log file; `valid` false when the line is not in that format (content
// is then the whole line).
struct CriLine {
  std::string timestamp;
  std::string stream;    // stdout | stderr
  bool partial = false;  // P: the line goes on in the next record
  std::string content;
  bool valid = false;
};
CriLine ParseCri(const std::string& line);

class LogStream : public StreamSource {
 public:
  LogStream(api::PodLogs* logs, api::LogRequest request, api::LogFile file, LogOptions options);
  bool Poll(std::string* out) override;
  bool SetNotify(std::function<void()>) override { return false; }
  void Stop() override { done_ = true; }

 private:
  // Reads the bytes appended since the last call; false when the file cannot be read.
  bool ReadMore(std::string* raw);
  // Turns complete CRI lines of pending_ into output (keeps a trailing incomplete line).
  void Render(std::string* out, bool first);
  bool Emit(std::string* out, const std::string& text);  // false once limit_bytes is reached

  api::PodLogs* logs_;
  api::LogRequest request_;
  api::LogFile file_;
  LogOptions options_;
  std::uint64_t offset_ = 0;
  std::string pending_;
  std::int64_t emitted_ = 0;
  bool first_ = true;
  bool done_ = false;
};

}  // namespace pjemu::apiserver
