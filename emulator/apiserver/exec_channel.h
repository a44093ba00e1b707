// ExecChannel: the server side of pods/exec over WebSocket. Start runs the command through
// api::PodExec (inside the container); a thread of its own copies the process's stdout and
// stderr to channels 1 and 2 (read and dropped when the client did not ask for them), then
// sends the exit on the error channel (ExitStatusJson; a Status for a command that could not
// start) and closes the connection. Channel 0 goes to the process's stdin through an FdWriter;
// v5's close signal for channel 0 closes it; channel 4 resizes a tty. Stop (the client left)
// kills the process.
// Thread safety: Start, OnMessage and Stop on the session's strand; the copying thread holds a
// reference to the channel and ends when the process's output ends.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "emulator/api/exec.h"
#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/fd_writer.h"
#include "emulator/apiserver/http_types.h"

namespace pjemu::apiserver {

class ExecChannel final : public ChannelHandler, public std::enable_shared_from_this<ExecChannel> {
 public:
  ExecChannel(api::PodExec& exec, api::ExecRequest request, ExecOptions options,
              ChannelProtocol protocol);
  ~ExecChannel() override;
  void Start(std::shared_ptr<ChannelSink> sink) override;
  void OnMessage(std::string message, bool binary) override;
  void Stop() override;

 private:
  void Send(std::uint8_t channel, std::string_view data);
  void CopyOutput();  // the thread: output, then the exit
  void SendExit(int code);

  api::PodExec& exec_;
  api::ExecRequest request_;
  ExecOptions options_;
  ChannelProtocol protocol_;
  std::shared_ptr<ChannelSink> sink_;
  std::unique_ptr<api::ExecProcess> process_;  // set in Start, before the thread
  std::unique_ptr<FdWriter> stdin_;
  std::atomic<bool> stopped_{false};
};

}  // namespace pjemu::apiserver
