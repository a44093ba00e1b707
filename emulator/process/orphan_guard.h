// OrphanGuard: makes sure no process group the emulator started outlives it, even when the
// emulator is SIGKILLed. A small guardian process (forked once, async-signal-safe code only)
// holds the read end of a pipe; the runner tells it each process group it creates and reaps.
// When the emulator dies for any reason the kernel closes the pipe, the guardian reads EOF and
// SIGKILLs every group still registered, then exits. The guardian ignores SIGINT/SIGTERM/SIGHUP
// so a Ctrl-C on the terminal reaches the emulator first and the guardian cleans up after it.
// Thread safety: Add/Remove may be called from any thread (one write(2) each).
#pragma once

#include <sys/types.h>

namespace pjemu::process {

class OrphanGuard {
 public:
  OrphanGuard();   // forks the guardian; ok() is false if that failed
  ~OrphanGuard();  // closes the pipe (the guardian kills what is left) and reaps the guardian
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  bool ok() const { return fd_ >= 0; }
  pid_t guardian_pid() const { return guardian_; }
  void Add(pid_t pgid);
  void Remove(pid_t pgid);

 private:
  int fd_ = -1;
  pid_t guardian_ = -1;
};

}  // namespace pjemu::process
