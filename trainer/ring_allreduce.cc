#include "trainer/ring_allreduce.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

namespace pjemu::trainer {
namespace {

using Clock = std::chrono::steady_clock;

// How long a rank with nothing to send or receive keeps retrying before it blocks in poll():
// the peer usually arrives within this, and a wake-up costs more (see the header).
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr int kSocketBuffer = 4 << 20;  // the kernel caps it at its *mem_max

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string Key(int rank) { return "pjemu_ring/" + std::to_string(rank); }

// "host:port" of a bound socket.
Result<std::string> LocalAddress(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return InternalError(Errno("all-reduce ring: getsockname"));
  }
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

// A peer's published "host:port"; a bad one means the rendezvous failed, not a usage error.
Result<sockaddr_in> ParsePeerAddress(const std::string& s, int rank) {
  const size_t colon = s.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const int port = colon == std::string::npos ? 0 : std::atoi(s.c_str() + colon + 1);
  if (colon == std::string::npos || port < 1 || port > 65535 ||
      inet_pton(AF_INET, s.substr(0, colon).c_str(), &a.sin_addr) != 1) {
    return Status(Code::kUnavailable, "all-reduce ring: rank " + std::to_string(rank) +
                                          " published no IPv4 host:port but \"" + s + "\"");
  }
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

Status Tune(int fd) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSocketBuffer, sizeof kSocketBuffer) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kSocketBuffer, sizeof kSocketBuffer) != 0 ||
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    return InternalError(Errno("all-reduce ring: socket options"));
  }
  return Status::Ok();
}

// Reads or writes exactly `n` bytes on a blocking socket (the 4-byte hello).
bool WriteAll(int fd, const void* p, size_t n) {
  return send(fd, p, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
}
bool ReadAll(int fd, void* p, size_t n) {
  return recv(fd, p, n, MSG_WAITALL) == static_cast<ssize_t>(n);
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Result<int> Listen(const std::string& host) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    return Status(Code::kInvalid,
                  "all-reduce ring: the listen host is not an IPv4 address: " + host);
  }
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0 || bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(fd.get(), 4) != 0) {
    return InternalError(Errno("all-reduce ring: listen on " + host));
  }
  return fd.release();
}

// Connects to `addr`, retrying until the deadline (the peer's listener already exists when its
// address is published, but the connection may still be refused on a busy host).
Result<int> ConnectTo(const sockaddr_in& addr, int next, Clock::time_point deadline) {
  while (true) {
    Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return InternalError(Errno("all-reduce ring: socket"));
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      return fd.release();
    }
    if (Clock::now() >= deadline) {
      return Status(Code::kTimeout,
                    Errno("all-reduce ring: connect to rank " + std::to_string(next)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<int> AcceptFrom(int listen_fd, int prev, Clock::time_point deadline) {
  pollfd p{listen_fd, POLLIN, 0};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) != 1) {
    return Status(Code::kTimeout,
                  "all-reduce ring: rank " + std::to_string(prev) + " did not connect");
  }
  Fd fd(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
  int32_t hello = -1;
  if (fd.get() < 0 || !ReadAll(fd.get(), &hello, sizeof hello)) {
    return Status(Code::kUnavailable,
                  Errno("all-reduce ring: accept from rank " + std::to_string(prev)));
  }
  if (hello != prev) {  // the group did not form as the store says: retryable, as gloo's
    return Status(Code::kUnavailable, "all-reduce ring: expected rank " + std::to_string(prev) +
                                          ", rank " + std::to_string(hello) + " connected");
  }
  return fd.release();
}

// Chunk k of n floats split over `parts`: [Begin(k), Begin(k + 1)).
int64_t Begin(int64_t n, int parts, int k) { return n * k / parts; }

}  // namespace

Result<std::unique_ptr<RingAllReduce>> RingAllReduce::Connect(int rank, int world_size,
                                                              const std::string& host,
                                                              const RingRendezvous& rendezvous,
                                                              std::chrono::milliseconds timeout) {
  if (world_size == 1) {
    return std::unique_ptr<RingAllReduce>(new RingAllReduce(rank, 1, -1, -1, timeout));
  }
  const auto deadline = Clock::now() + timeout;
  const int next = (rank + 1) % world_size, prev = (rank + world_size - 1) % world_size;
  ASSIGN_OR_RETURN(int listen_raw, Listen(host));
  Fd listener(listen_raw);
  ASSIGN_OR_RETURN(std::string mine, LocalAddress(listener.get()));
  RETURN_IF_ERROR(rendezvous.set(Key(rank), mine));
  ASSIGN_OR_RETURN(std::string theirs, rendezvous.get(Key(next)));
  ASSIGN_OR_RETURN(sockaddr_in next_addr, ParsePeerAddress(theirs, next));
  ASSIGN_OR_RETURN(int to_next_raw, ConnectTo(next_addr, next, deadline));
  Fd to_next(to_next_raw);
  const int32_t hello = rank;
  if (!WriteAll(to_next.get(), &hello, sizeof hello)) {
    return Status(Code::kUnavailable,
                  Errno("all-reduce ring: hello to rank " + std::to_string(next)));
  }
  ASSIGN_OR_RETURN(int from_prev_raw, AcceptFrom(listener.get(), prev, deadline));
  Fd from_prev(from_prev_raw);
  RETURN_IF_ERROR(Tune(to_next.get()));
  RETURN_IF_ERROR(Tune(from_prev.get()));
  return std::unique_ptr<RingAllReduce>(
      new RingAllReduce(rank, world_size, to_next.release(), from_prev.release(), timeout));
}

RingAllReduce::RingAllReduce(int rank, int world_size, int to_next, int from_prev,
                             std::chrono::milliseconds timeout)
    : rank_(rank),
      world_size_(world_size),
      to_next_(to_next),
      from_prev_(from_prev),
      timeout_(timeout) {}

RingAllReduce::~RingAllReduce() {
  if (to_next_ >= 0) close(to_next_);
  if (from_prev_ >= 0) close(from_prev_);
}

Status RingAllReduce::SumInPlace(float* data, int64_t n) {
  const int w = world_size_;
  if (w == 1 || n == 0) return Status::Ok();
  auto chunk = [&](int k) {
    k = ((k % w) + w) % w;
    return std::pair<float*, int64_t>(data + Begin(n, w, k), Begin(n, w, k + 1) - Begin(n, w, k));
  };
  scratch_.resize(static_cast<size_t>(n / w + 1));
  // Reduce-scatter: after step s this rank holds chunk (rank - s - 1) summed over s + 2 ranks;
  // at the end, chunk rank + 1 summed over all.
  for (int s = 0; s < w - 1; ++s) {
    auto [send, send_n] = chunk(rank_ - s);
    auto [into, recv_n] = chunk(rank_ - s - 1);
    RETURN_IF_ERROR(Exchange(reinterpret_cast<const char*>(send), send_n * 4,
                             reinterpret_cast<char*>(scratch_.data()), recv_n * 4, into));
  }
  // All-gather: pass the summed chunks around the ring.
  for (int s = 0; s < w - 1; ++s) {
    auto [send, send_n] = chunk(rank_ + 1 - s);
    auto [into, recv_n] = chunk(rank_ - s);
    RETURN_IF_ERROR(Exchange(reinterpret_cast<const char*>(send), send_n * 4,
                             reinterpret_cast<char*>(into), recv_n * 4, nullptr));
  }
  return Status::Ok();
}

Status RingAllReduce::Exchange(const char* send, int64_t send_bytes, char* recv_buf,
                               int64_t recv_bytes, float* add_into) {
  const int next = (rank_ + 1) % world_size_, prev = (rank_ + world_size_ - 1) % world_size_;
  int64_t sent = 0, got = 0, added = 0;
  auto last_progress = Clock::now(), idle_since = last_progress;
  while (sent < send_bytes || got < recv_bytes) {
    bool progress = false;
    if (sent < send_bytes) {
      const ssize_t k =
          ::send(to_next_, send + sent, send_bytes - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        sent += k;
        progress = true;
      } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status(Code::kUnavailable,
                      Errno("all-reduce ring: send to rank " + std::to_string(next)));
      }
    }
    if (got < recv_bytes) {
      const ssize_t k = ::recv(from_prev_, recv_buf + got, recv_bytes - got, MSG_DONTWAIT);
      if (k == 0) {
        return Status(Code::kUnavailable,
                      "all-reduce ring: rank " + std::to_string(prev) + " closed the connection");
      }
      if (k > 0) {
        got += k;
        progress = true;
        if (add_into != nullptr) {
          const float* r = reinterpret_cast<const float*>(recv_buf);
          const int64_t whole = got / 4;
          for (int64_t i = added; i < whole; ++i) add_into[i] += r[i];
          added = whole;
        }
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status(Code::kUnavailable,
                      Errno("all-reduce ring: receive from rank " + std::to_string(prev)));
      }
    }
    const auto now = Clock::now();
    if (progress) {
      last_progress = idle_since = now;
      continue;
    }
    if (now - idle_since < kSpin) continue;
    if (now - last_progress >= timeout_) {
      return Status(Code::kTimeout, "all-reduce ring: no progress with ranks " +
                                        std::to_string(prev) + " and " + std::to_string(next) +
                                        " for " + std::to_string(timeout_.count()) + " ms");
    }
    pollfd fds[2];
    nfds_t count = 0;
    if (sent < send_bytes) fds[count++] = {to_next_, POLLOUT, 0};
    if (got < recv_bytes) fds[count++] = {from_prev_, POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(last_progress + timeout_ - now);
    if (poll(fds, count, static_cast<int>(std::min<int64_t>(left.count(), 1000))) < 0 &&
        errno != EINTR) {
      return InternalError(Errno("all-reduce ring: poll"));
    }
    idle_since = Clock::now() - kSpin;  // after a wake-up, poll again at once if still idle
  }
  return Status::Ok();
}

}  // namespace pjemu::trainer
