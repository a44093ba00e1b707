#include "emulator/process/host_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>

namespace pjemu::process {
namespace {

// The listening socket of ip:port, made inside the namespace at netns_path by this thread,
// which then returns to the namespace it came from. Errors name the step that failed.
Result<int> ListenIn(const std::string& netns_path, const std::string& ip, int port) {
  int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int target = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (own < 0 || target < 0) {
    if (own >= 0) close(own);
    if (target >= 0) close(target);
    return Status(Code::kUnavailable, "relay: cannot open " + netns_path + ": " + strerror(errno));
  }
  if (setns(target, CLONE_NEWNET) != 0) {
    std::string why = strerror(errno);
    close(own);
    close(target);
    return Status(Code::kUnavailable, "relay: cannot enter " + netns_path + ": " + why);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string why;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  int one = 1;
  if (fd < 0 || inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0) {
    why = strerror(errno);
    if (fd >= 0) close(fd);
    fd = -1;
  }
  const bool back = setns(own, CLONE_NEWNET) == 0;
  close(own);
  close(target);
  if (!back) {
    if (fd >= 0) close(fd);
    return Status(Code::kInternal, "relay: cannot return to the host's network namespace");
  }
  if (fd < 0) {
    return Status(Code::kUnavailable,
                  "relay: cannot listen on " + ip + ":" + std::to_string(port) + ": " + why);
  }
  return fd;
}

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<HostRelay>> HostRelay::Start(const std::string& netns_path,
                                                    const std::string& ip, int port,
                                                    int host_port) {
  // A thread of its own enters the namespace, so this one never leaves the host's.
  Result<int> fd = std::async(std::launch::async, ListenIn, netns_path, ip, port).get();
  if (!fd.ok()) return fd.status();
  std::unique_ptr<HostRelay> relay(new HostRelay());
  relay->listen_fd_ = *fd;
  relay->host_port_ = host_port;
  if (pipe2(relay->stop_pipe_, O_CLOEXEC) != 0) {
    return Status(Code::kInternal, std::string("relay: pipe: ") + strerror(errno));
  }
  relay->acceptor_ = std::thread([r = relay.get()] { r->AcceptLoop(); });
  return relay;
}

HostRelay::~HostRelay() {
  if (stop_pipe_[1] >= 0) (void)!write(stop_pipe_[1], "x", 1);
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return active_ == 0; });
  }
  for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void HostRelay::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++active_;
    }
    std::thread([this, client] {
      Pipe(client);
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_.notify_all();
    }).detach();
  }
}

// Copies bytes both ways between the pod's connection and a new one to the host's port, until
// either closes (its half-close passed on) or the relay stops.
void HostRelay::Pipe(int client) {
  int server = ConnectLoopback(host_port_);
  if (server < 0) {
    close(client);
    return;
  }
  char buf[16384];
  bool open_in[2] = {true, true};  // client -> server, server -> client
  while (open_in[0] || open_in[1]) {
    pollfd fds[3] = {{client, static_cast<short>(open_in[0] ? POLLIN : 0), 0},
                     {server, static_cast<short>(open_in[1] ? POLLIN : 0), 0},
                     {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents) break;
    for (int side = 0; side < 2; ++side) {
      if (!open_in[side] || !(fds[side].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int from = side == 0 ? client : server, to = side == 0 ? server : client;
      ssize_t n = read(from, buf, sizeof buf);
      if (n <= 0) {
        open_in[side] = false;
        shutdown(to, SHUT_WR);
        continue;
      }
      for (ssize_t done = 0; done < n;) {
        ssize_t w = write(to, buf + done, static_cast<std::size_t>(n - done));
        if (w <= 0) {
          open_in[0] = open_in[1] = false;
          break;
        }
        done += w;
      }
    }
  }
  close(client);
  close(server);
}

}  // namespace pjemu::process
