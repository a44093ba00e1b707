#include "emulator/process/cri_log_writer.h"

#include <ctime>

namespace pjemu::process {
namespace {
// Lines longer than this are split into P chunks, like the kubelet's 16 KiB buffer.
constexpr std::size_t kMaxLine = 16 * 1024;
}  // namespace

std::string FormatNanoTime(Time t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  long frac = static_cast<long>(ns % 1'000'000'000);
  if (frac < 0) frac += 1'000'000'000, --secs;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09ldZ", frac);
  return buf;
}

std::string CriLine(Time t, std::string_view stream, bool partial, std::string_view text) {
  std::string line = FormatNanoTime(t);
  line += ' ';
  line += stream;
  line += partial ? " P " : " F ";
  line += text;
  line += '\n';
  return line;
}

CriLogWriter::CriLogWriter(const Clock& clock, const std::string& path)
    : clock_(clock), path_(path) {
  if (!path_.empty()) file_ = std::fopen(path_.c_str(), "ae");
}

CriLogWriter::~CriLogWriter() {
  Flush();
  if (file_) std::fclose(file_);
}

void CriLogWriter::Emit(std::string_view stream, bool partial, std::string_view text) {
  if (!file_) return;
  std::string line = CriLine(clock_.Now(), stream, partial, text);
  std::fwrite(line.data(), 1, line.size(), file_);
}

void CriLogWriter::Write(std::string_view stream, std::string_view bytes) {
  std::string& pending = stream == "stderr" ? pending_err_ : pending_out_;
  pending.append(bytes);
  std::size_t start = 0;
  while (true) {
    std::size_t nl = pending.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line = std::string_view(pending).substr(start, nl - start);
    while (line.size() > kMaxLine) {
      Emit(stream, true, line.substr(0, kMaxLine));
      line.remove_prefix(kMaxLine);
    }
    Emit(stream, false, line);
    start = nl + 1;
  }
  pending.erase(0, start);
  while (pending.size() >= kMaxLine) {
    Emit(stream, true, std::string_view(pending).substr(0, kMaxLine));
    pending.erase(0, kMaxLine);
  }
  if (file_) std::fflush(file_);
}

void CriLogWriter::Flush() {
  // containerd ends an unterminated last line at EOF as a full line (F).
  if (!pending_out_.empty()) Emit("stdout", false, pending_out_);
  if (!pending_err_.empty()) Emit("stderr", false, pending_err_);
  pending_out_.clear();
  pending_err_.clear();
  if (file_) std::fflush(file_);
}

}  // namespace pjemu::process
