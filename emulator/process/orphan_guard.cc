#include "emulator/process/orphan_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace pjemu::process {
namespace {

constexpr int kMaxGroups = 4096;

// Runs in the forked guardian: only async-signal-safe calls, no allocation.
[[noreturn]] void GuardianMain(int read_fd) {
  static pid_t groups[kMaxGroups];
  int count = 0;
  std::int32_t msg;
  while (true) {
    ssize_t n = read(read_fd, &msg, sizeof msg);
    if (n == static_cast<ssize_t>(sizeof msg)) {
      if (msg > 0 && count < kMaxGroups) {
        groups[count++] = msg;
      } else if (msg < 0) {
        for (int i = 0; i < count; ++i) {
          if (groups[i] == -msg) {
            groups[i] = groups[--count];
            break;
          }
        }
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EOF (the emulator is gone or finished) or an error
  }
  for (int i = 0; i < count; ++i) kill(-groups[i], SIGKILL);
  _exit(0);
}

}  // namespace

OrphanGuard::OrphanGuard() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    // Close every inherited descriptor but the read end, so that the guardian holds no pipe
    // another process waits on (a test's stdout, a pod's log pipe).
    for (int fd = 0; fd < 1024; ++fd) {
      if (fd != fds[0]) close(fd);
    }
    GuardianMain(fds[0]);
  }
  close(fds[0]);
  fd_ = fds[1];
  guardian_ = pid;
}

OrphanGuard::~OrphanGuard() {
  if (fd_ >= 0) close(fd_);
  if (guardian_ > 0) waitpid(guardian_, nullptr, 0);
}

void OrphanGuard::Add(pid_t pgid) {
  std::int32_t msg = pgid;
  if (fd_ >= 0) (void)!write(fd_, &msg, sizeof msg);
}

void OrphanGuard::Remove(pid_t pgid) {
  std::int32_t msg = -pgid;
  if (fd_ >= 0) (void)!write(fd_, &msg, sizeof msg);
}

}  // namespace pjemu::process
