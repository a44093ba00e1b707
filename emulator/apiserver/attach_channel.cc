#include "emulator/apiserver/attach_channel.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "emulator/apiserver/log_stream.h"

namespace pjemu::apiserver {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr int kPollsPerCheck = 5;  // the container's state is looked up every 0.5 s

std::uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

}  // namespace

AttachChannel::AttachChannel(api::PodLogs& logs, api::LogRequest request, ExecOptions options,
                             ChannelProtocol protocol)
    : logs_(logs),
      request_(std::move(request)),
      options_(std::move(options)),
      protocol_(protocol) {}

void AttachChannel::Send(std::uint8_t channel, std::string_view data) {
  bool text = false;
  std::string frame = EncodeChannel(protocol_, channel, data, &text);
  sink_->Send(std::move(frame), !text);
}

void AttachChannel::Start(std::shared_ptr<ChannelSink> sink) {
  sink_ = std::move(sink);
  auto file = logs_.Find(request_);
  if (!file.ok() || !file->running) {
    std::string message = file.ok() ? "container not found (\"" + request_.container + "\")"
                                    : file.status().message();
    Send(kErrorChannel, ErrorStatusJson(message));
    sink_->Close();
    return;
  }
  std::uint64_t offset = FileSize(file->path);
  std::thread([self = shared_from_this(), path = file->path, offset] {
    self->Follow(path, offset);
  }).detach();
}

void AttachChannel::Follow(std::string path, std::uint64_t offset) {
  std::string pending;
  for (int poll = 1; !stopped_; ++poll) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      in.seekg(static_cast<std::streamoff>(offset));
      std::string more((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      offset += more.size();
      pending += more;
      SendRecords(&pending);
    }
    if (poll % kPollsPerCheck == 0) {
      auto file = logs_.Find(request_);
      if (!file.ok() || !file->running || file->path != path) break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  if (stopped_) return;
  Send(kErrorChannel, ExitStatusJson(0, {}));
  sink_->Close();
}

void AttachChannel::SendRecords(std::string* pending) {
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending->find('\n', start)) != std::string::npos; start = nl + 1) {
    CriLine line = ParseCri(pending->substr(start, nl - start));
    bool err = line.stream == "stderr";
    if (!line.valid || (err ? !options_.with_stderr : !options_.with_stdout)) continue;
    Send(err ? kStderrChannel : kStdoutChannel, line.partial ? line.content : line.content + "\n");
  }
  pending->erase(0, start);
}

}  // namespace pjemu::apiserver
