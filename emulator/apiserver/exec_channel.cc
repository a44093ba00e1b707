#include "emulator/apiserver/exec_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace pjemu::apiserver {

ExecChannel::ExecChannel(api::PodExec& exec, api::ExecRequest request, ExecOptions options,
                         ChannelProtocol protocol)
    : exec_(exec),
      request_(std::move(request)),
      options_(std::move(options)),
      protocol_(protocol) {}

ExecChannel::~ExecChannel() {
  stdin_.reset();  // joins its thread before the process (and its stdin) goes
  process_.reset();
}

void ExecChannel::Send(std::uint8_t channel, std::string_view data) {
  bool text = false;
  std::string frame = EncodeChannel(protocol_, channel, data, &text);
  sink_->Send(std::move(frame), !text);
}

void ExecChannel::Start(std::shared_ptr<ChannelSink> sink) {
  sink_ = std::move(sink);
  auto process = exec_.Exec(request_);
  if (!process.ok()) {
    bool v1 = protocol_ == ChannelProtocol::kV1 || protocol_ == ChannelProtocol::kV1Base64;
    const std::string& message = process.status().message();
    Send(kErrorChannel, v1 ? message : ErrorStatusJson(message));
    sink_->Close();
    return;
  }
  process_ = std::move(process).value();
  if (process_->stdin_fd() >= 0) {
    api::ExecProcess* p = process_.get();
    stdin_ = std::make_unique<FdWriter>(p->stdin_fd(), [p] { p->CloseStdin(); });
  }
  std::thread([self = shared_from_this()] { self->CopyOutput(); }).detach();
}

void ExecChannel::OnMessage(std::string message, bool) {
  auto m = DecodeChannel(protocol_, message);
  if (!m || !process_) return;
  if (m->channel == kStdinChannel) {
    if (stdin_) stdin_->Write(std::move(m->data));
  } else if (m->channel == kCloseSignal && protocol_ == ChannelProtocol::kV5) {
    if (!m->data.empty() && m->data[0] == kStdinChannel && stdin_) stdin_->Close();
  } else if (m->channel == kResizeChannel) {
    Json size = Json::parse(m->data, nullptr, false);
    if (size.is_object()) {
      process_->Resize(size.value("Width", 0), size.value("Height", 0));
    }
  }
}

void ExecChannel::Stop() {
  stopped_ = true;
  if (stdin_) stdin_->Stop();
  if (process_) process_->Kill();
}

// Copies stdout and stderr until both end (a tty's master reads EIO once the terminal has no
// process left), then reports the exit.
void ExecChannel::CopyOutput() {
  struct Source {
    int fd;
    std::uint8_t channel;
    bool wanted;
  };
  std::vector<Source> open;
  if (process_->stdout_fd() >= 0) {
    open.push_back({process_->stdout_fd(), kStdoutChannel, options_.with_stdout});
  }
  if (process_->stderr_fd() >= 0) {
    open.push_back({process_->stderr_fd(), kStderrChannel, options_.with_stderr});
  }
  char buf[32 * 1024];
  while (!open.empty() && !stopped_) {
    std::vector<pollfd> fds;
    for (const Source& s : open) fds.push_back({s.fd, POLLIN, 0});
    int ready = poll(fds.data(), fds.size(), 200);
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      ssize_t n = read(open[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      if (open[i].wanted) Send(open[i].channel, std::string_view(buf, static_cast<std::size_t>(n)));
    }
  }
  int code = process_->Wait();
  if (stopped_) return;
  SendExit(code);
  sink_->Close();
}

void ExecChannel::SendExit(int code) {
  if (protocol_ == ChannelProtocol::kV1 || protocol_ == ChannelProtocol::kV1Base64) {
    if (code != 0)
      Send(kErrorChannel, "command terminated with non-zero exit code " + std::to_string(code));
    return;
  }
  Send(kErrorChannel, ExitStatusJson(code, request_.command));
}

}  // namespace pjemu::apiserver
