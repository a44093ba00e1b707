// AttachChannel: the server side of pods/attach over WebSocket. A container's stdin is closed
// and its output goes to its CRI log file (api::PodLogs), so attaching follows that file from
// its end at the time of the attach: stdout records to channel 1, stderr records to channel 2
// (each when asked for), until the container instance stops (or restarts, or its pod goes);
// then a Success Status on the error channel and a normal close. What the client sends on
// stdin is dropped (deviation: the real kubelet refuses stdin for a container without
// `stdin: true`, and streams the process's own pipes).
// Thread safety: Start, OnMessage and Stop on the session's strand; the following thread holds
// a reference to the channel; PodLogs is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/http_types.h"

namespace pjemu::apiserver {

class AttachChannel final : public ChannelHandler,
                            public std::enable_shared_from_this<AttachChannel> {
 public:
  AttachChannel(api::PodLogs& logs, api::LogRequest request, ExecOptions options,
                ChannelProtocol protocol);
  void Start(std::shared_ptr<ChannelSink> sink) override;
  void OnMessage(std::string, bool) override {}
  void Stop() override { stopped_ = true; }

 private:
  void Follow(std::string path, std::uint64_t offset);  // the thread
  // Sends the complete records of *pending (keeps a trailing incomplete one).
  void SendRecords(std::string* pending);
  void Send(std::uint8_t channel, std::string_view data);

  api::PodLogs& logs_;
  api::LogRequest request_;
  ExecOptions options_;
  ChannelProtocol protocol_;
  std::shared_ptr<ChannelSink> sink_;
  std::atomic<bool> stopped_{false};
};

}  // namespace pjemu::apiserver
