#include "emulator/cli/log_tailer.h"

#include <fstream>

namespace pjemu::cli {

std::optional<CriLine> ParseCriLine(std::string_view line) {
  auto s1 = line.find(' ');
  if (s1 == std::string_view::npos) return std::nullopt;
  auto s2 = line.find(' ', s1 + 1);
  if (s2 == std::string_view::npos) return std::nullopt;
  auto s3 = line.find(' ', s2 + 1);
  std::string_view tag = line.substr(s2 + 1, s3 == std::string_view::npos ? line.npos : s3 - s2 - 1);
  if (tag != "F" && tag != "P") return std::nullopt;
  CriLine out;
  out.timestamp = std::string(line.substr(0, s1));
  out.stream = std::string(line.substr(s1 + 1, s2 - s1 - 1));
  out.partial = tag == "P";
  if (s3 != std::string_view::npos) out.text = std::string(line.substr(s3 + 1));
  return out;
}

void LogTailer::Follow(const std::string& path) {
  if (path == path_) return;
  path_ = path;
  offset_ = 0;
  carry_.clear();
  partial_.clear();
}

std::vector<std::string> LogTailer::ReadNew() {
  std::vector<std::string> lines;
  if (path_.empty()) return lines;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return lines;
  in.seekg(0, std::ios::end);
  std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
  if (size < offset_) {  // truncated or replaced: start over
    offset_ = 0;
    carry_.clear();
  }
  if (size == offset_) return lines;
  std::string data(size - offset_, '\0');
  in.seekg(static_cast<std::streamoff>(offset_));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  offset_ = size;
  carry_ += data;
  std::size_t start = 0, nl;
  while ((nl = carry_.find('\n', start)) != std::string::npos) {
    std::string_view record(carry_.data() + start, nl - start);
    start = nl + 1;
    auto cri = ParseCriLine(record);
    if (!cri) {
      lines.emplace_back(record);  // not CRI: pass through as is
      continue;
    }
    partial_ += cri->text;
    if (!cri->partial) {
      lines.push_back(std::move(partial_));
      partial_.clear();
    }
  }
  carry_.erase(0, start);
  return lines;
}

}  // namespace pjemu::cli
