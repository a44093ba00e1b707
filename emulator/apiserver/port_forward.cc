#include "emulator/apiserver/port_forward.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace pjemu::apiserver {
namespace {

// errno's text as Go spells it (lower case: "connection refused"), since the kubelet's message
// is a Go error.
std::string GoErrno(int error) {
  std::string text = std::strerror(error);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// A TCP socket made inside the network namespace at `netns` (it stays there: connect then
// reaches the pod's own addresses, its 127.0.0.1 included). The calling thread enters the
// namespace for the socket(2) call only and goes back to its own.
int SocketIn(const std::string& netns) {
  if (netns.empty()) return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int target = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
  int fd = -1, err = 0;
  if (own < 0 || target < 0) {
    err = errno;
  } else if (setns(target, CLONE_NEWNET) != 0) {
    err = errno;
  } else {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    err = errno;
    if (setns(own, CLONE_NEWNET) != 0) std::abort();  // a thread left in a pod's network
  }
  if (own >= 0) close(own);
  if (target >= 0) close(target);
  errno = err;
  return fd;
}

// A connected TCP socket to host:port (in the namespace `netns`, "" = ours), or -1 with *error.
int Dial(const std::string& host, std::uint16_t port, const std::string& netns,
         std::string* error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    *error = "bad address " + host;
    return -1;
  }
  int fd = SocketIn(netns);
  if (fd < 0) {
    *error = GoErrno(errno);
    return -1;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *error = "dial tcp " + host + ":" + std::to_string(port) + ": connect: " + GoErrno(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

PortForwardChannel::PortForwardChannel(std::string pod, std::string uid, std::string host,
                                       std::vector<std::uint16_t> ports, ChannelProtocol protocol,
                                       bool port_prefix)
    : pod_(std::move(pod)),
      uid_(std::move(uid)),
      host_(std::move(host)),
      protocol_(protocol),
      port_prefix_(port_prefix) {
  for (std::uint16_t p : ports) ports_.push_back(Port{p, -1, nullptr});
}

PortForwardChannel::~PortForwardChannel() {
  for (Port& p : ports_) {
    p.writer.reset();
    if (p.fd >= 0) close(p.fd);
  }
}

void PortForwardChannel::Send(std::uint8_t channel, std::string_view data) {
  bool text = false;
  std::string frame = EncodeChannel(protocol_, channel, data, &text);
  sink_->Send(std::move(frame), !text);
}

void PortForwardChannel::Start(std::shared_ptr<ChannelSink> sink) {
  sink_ = std::move(sink);
  for (std::size_t i = 0; port_prefix_ && i < ports_.size(); ++i) {
    Send(static_cast<std::uint8_t>(2 * i), PortPrefix(ports_[i].number));
    Send(static_cast<std::uint8_t>(2 * i + 1), PortPrefix(ports_[i].number));
  }
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    Port& p = ports_[i];
    std::string error;
    p.fd = Dial(host_, p.number, netns_, &error);
    if (p.fd < 0) {
      Send(static_cast<std::uint8_t>(2 * i + 1), "error forwarding port " +
                                                     std::to_string(p.number) + " to pod " + pod_ +
                                                     ", uid " + uid_ + ": " + error);
      continue;
    }
    int fd = p.fd;
    p.writer = std::make_unique<FdWriter>(fd, [fd] { shutdown(fd, SHUT_WR); });
    ++open_;
  }
  if (open_ == 0) return sink_->Close();
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i].fd >= 0) {
      std::thread([self = shared_from_this(), i] { self->Copy(i); }).detach();
    }
  }
}

void PortForwardChannel::OnMessage(std::string message, bool) {
  auto m = DecodeChannel(protocol_, message);
  if (!m) return;
  bool close = m->channel == kCloseSignal && !m->data.empty();
  std::uint8_t channel = close ? static_cast<std::uint8_t>(m->data[0]) : m->channel;
  if (channel % 2 != 0 || channel / 2 >= ports_.size()) return;
  Port& p = ports_[channel / 2];
  if (!p.writer) return;
  if (close) return p.writer->Close();
  p.writer->Write(std::move(m->data));
}

void PortForwardChannel::Stop() {
  stopped_ = true;
  for (Port& p : ports_) {
    if (p.writer) p.writer->Stop();
    if (p.fd >= 0) shutdown(p.fd, SHUT_RDWR);  // ends the reading threads
  }
}

void PortForwardChannel::Copy(std::size_t i) {
  int fd = ports_[i].fd;
  auto channel = static_cast<std::uint8_t>(2 * i);
  char buf[32 * 1024];
  while (!stopped_) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 200);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    Send(channel, std::string_view(buf, static_cast<std::size_t>(n)));
  }
  PortDone();
}

void PortForwardChannel::PortDone() {
  if (--open_ == 0 && !stopped_) sink_->Close();
}

}  // namespace pjemu::apiserver
