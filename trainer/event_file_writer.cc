#include "trainer/event_file_writer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <filesystem>

#include "trainer/tf_event.h"

namespace pjemu::trainer {
namespace {

// tensorboard's _global_uid: the number of events files this process has opened.
std::atomic<int64_t> g_files_opened{0};

}  // namespace

double SystemWallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string LocalHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

std::string EventFileName(int64_t secs, std::string_view host, int64_t pid, int64_t n) {
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%010" PRId64, secs);
  return "events.out.tfevents." + std::string(stamp) + "." + std::string(host) + "." +
         std::to_string(pid) + "." + std::to_string(n);
}

EventFileWriter::~EventFileWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

Status EventFileWriter::Open(const std::string& dir, std::string_view host, int64_t pid) {
  if (f_ != nullptr) return InternalError("events file already open: " + path_);
  // A hostname is a file-name component: no '/' (nor an empty or dot-only name).
  if (host.empty() || host.find('/') != std::string_view::npos || host == "." || host == "..") {
    return InternalError("bad hostname for an events file name: '" + std::string(host) + "'");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InternalError("cannot create --dir " + dir + ": " + ec.message());
  const double now = clock_();
  path_ =
      dir + "/" + EventFileName(static_cast<int64_t>(std::floor(now)), host, pid, g_files_opened++);
  f_ = std::fopen(path_.c_str(), "wbx");  // x: never truncate another writer's file
  if (f_ == nullptr) return InternalError("cannot create events file " + path_);
  return Write(FrameTfRecord(EncodeFileVersionEvent(now)));
}

Status EventFileWriter::AddScalar(std::string_view tag, float value, int64_t step) {
  if (f_ == nullptr) return InternalError("events file not open");
  return Write(FrameTfRecord(EncodeScalarEvent(clock_(), step, tag, value)));
}

Status EventFileWriter::Write(const std::string& record) {
  if (std::fwrite(record.data(), 1, record.size(), f_) != record.size() || std::fflush(f_) != 0) {
    return InternalError("cannot write events file " + path_);
  }
  return Status::Ok();
}

}  // namespace pjemu::trainer
