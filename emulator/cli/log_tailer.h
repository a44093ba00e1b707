// LogTailer: follows one container's CRI-format log file (api/logs.h: "<RFC3339Nano> <stream>
// <F|P> <bytes>") for `pjemu run`'s live log and `pjemu logs`, returning whole lines of output
// (partial P chunks joined) as they are appended. A new file (the container restarted) is
// followed from its start.
// Thread safety: one LogTailer per reader thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pjemu::cli {

struct CriLine {
  std::string timestamp;  // RFC 3339 with nanoseconds
  std::string stream;     // stdout | stderr
  bool partial = false;   // P: the line continues in the next record
  std::string text;
};

// Parses one CRI record; nullopt when the line is not in that format.
std::optional<CriLine> ParseCriLine(std::string_view line);

class LogTailer {
 public:
  // Switches to path (starting at its beginning) when it differs from the file followed now.
  void Follow(const std::string& path);
  // The complete output lines appended since the last call (without the CRI prefix).
  std::vector<std::string> ReadNew();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::uint64_t offset_ = 0;
  std::string carry_;    // bytes after the last '\n' in the file
  std::string partial_;  // text of P records waiting for their F
};

}  // namespace pjemu::cli
