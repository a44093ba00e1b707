#include "emulator/apiserver/log_stream.h"

#include <deque>
#include <fstream>
#include <vector>

namespace pjemu::apiserver {
namespace {

constexpr std::size_t kMaxRead = 1 << 20;  // bytes read per poll once caught up

}  // namespace

// "2016-10-06T00:17:09.669794202Z stdout F the log line".
CriLine ParseCri(const std::string& line) {
  CriLine out;
  std::size_t s1 = line.find(' ');
  std::size_t s2 = s1 == std::string::npos ? s1 : line.find(' ', s1 + 1);
  std::size_t s3 = s2 == std::string::npos ? s2 : line.find(' ', s2 + 1);
  if (s2 == std::string::npos) {
    out.content = line;
    return out;
  }
  out.timestamp = line.substr(0, s1);
  out.stream = line.substr(s1 + 1, s2 - s1 - 1);
  std::string tag =
      s3 == std::string::npos ? line.substr(s2 + 1) : line.substr(s2 + 1, s3 - s2 - 1);
  out.partial = tag.rfind("P", 0) == 0;
  out.content = s3 == std::string::npos ? "" : line.substr(s3 + 1);
  out.valid = true;
  return out;
}

LogStream::LogStream(api::PodLogs* logs, api::LogRequest request, api::LogFile file,
                     LogOptions options)
    : logs_(logs), request_(std::move(request)), file_(std::move(file)), options_(options) {}

bool LogStream::ReadMore(std::string* raw) {
  std::ifstream in(file_.path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
  if (size < offset_) offset_ = 0;  // truncated (rotated): start over
  std::uint64_t want = size - offset_;
  if (!first_ || !options_.tail_lines) want = std::min<std::uint64_t>(want, kMaxRead);
  in.seekg(static_cast<std::streamoff>(offset_));
  raw->resize(want);
  in.read(raw->data(), static_cast<std::streamsize>(want));
  raw->resize(static_cast<std::size_t>(in.gcount()));
  offset_ += raw->size();
  return true;
}

bool LogStream::Emit(std::string* out, const std::string& text) {
  if (options_.limit_bytes) {
    std::int64_t room = *options_.limit_bytes - emitted_;
    if (room <= 0) return false;
    if (static_cast<std::int64_t>(text.size()) > room) {
      out->append(text, 0, static_cast<std::size_t>(room));
      emitted_ += room;
      return false;
    }
  }
  out->append(text);
  emitted_ += static_cast<std::int64_t>(text.size());
  return true;
}

void LogStream::Render(std::string* out, bool first) {
  std::vector<CriLine> lines;
  std::size_t start = 0;
  while (true) {
    std::size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    lines.push_back(ParseCri(pending_.substr(start, nl - start)));
    start = nl + 1;
  }
  pending_.erase(0, start);
  std::size_t begin = 0;
  if (options_.since) {
    std::vector<CriLine> kept;
    for (auto& l : lines) {
      auto t = ParseTime(l.timestamp);
      if (!t || *t >= *options_.since) kept.push_back(std::move(l));
    }
    lines.swap(kept);
  }
  if (first && options_.tail_lines) {
    // Count whole lines from the end: a run of P entries ends with an F entry.
    std::int64_t want = std::max<std::int64_t>(*options_.tail_lines, 0);
    std::int64_t seen = 0;
    begin = lines.size();
    while (begin > 0) {
      if (!lines[begin - 1].partial) {
        if (seen == want) break;
        ++seen;
      }
      --begin;
    }
  }
  for (std::size_t i = begin; i < lines.size(); ++i) {
    std::string text;
    if (options_.timestamps && lines[i].valid) text = lines[i].timestamp + " ";
    text += lines[i].content;
    if (!lines[i].partial) text += "\n";
    if (!Emit(out, text)) {
      done_ = true;
      return;
    }
  }
}

bool LogStream::Poll(std::string* out) {
  if (done_) return false;
  for (int round = 0; round < 2; ++round) {
    std::string raw;
    if (!ReadMore(&raw)) {
      done_ = true;
      return false;
    }
    pending_ += raw;
    Render(out, first_);
    first_ = false;
    if (done_) return false;
    if (raw.size() >= kMaxRead) return true;  // more to read: come back soon
    if (!options_.follow) {
      done_ = true;
      return false;
    }
    if (round == 1) break;
    // Caught up: is the container instance still the one running?
    auto now = logs_->Find(request_);
    if (now.ok() && now->running && now->path == file_.path) return true;
    // It stopped (or the pod went away): read what it wrote last, then end.
  }
  done_ = true;
  return false;
}

}  // namespace pjemu::apiserver
