// CriLogWriter: turns raw stdout/stderr bytes of one container instance into the CRI log
// format the kubelet writes (emulator/api/logs.h): "<RFC3339Nano> <stream> <F|P> <bytes>\n".
// A line is written when its newline arrives; lines over 16 KiB are split into P chunks.
// Thread safety: not thread-safe; the PosixProcessRunner's I/O thread owns each writer.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "emulator/common/clock.h"

namespace pjemu::process {

// "2016-10-06T00:17:09.669794202Z" (RFC 3339 with nanoseconds, UTC).
std::string FormatNanoTime(Time t);

// One CRI log line (without reading anything): the format used by CriLogWriter.
std::string CriLine(Time t, std::string_view stream, bool partial, std::string_view text);

class CriLogWriter {
 public:
  // Opens path for appending; an empty path discards everything.
  CriLogWriter(const Clock& clock, const std::string& path);
  ~CriLogWriter();
  CriLogWriter(const CriLogWriter&) = delete;
  CriLogWriter& operator=(const CriLogWriter&) = delete;

  bool ok() const { return path_.empty() || file_ != nullptr; }
  // Appends bytes read from stream ("stdout" or "stderr").
  void Write(std::string_view stream, std::string_view bytes);
  // Writes out an unterminated last line (tag F, as containerd does at EOF) and flushes.
  void Flush();

 private:
  void Emit(std::string_view stream, bool partial, std::string_view text);

  const Clock& clock_;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string pending_out_;
  std::string pending_err_;
};

}  // namespace pjemu::process
