// FdWriter: writes what an upgraded connection's client sends (exec's stdin, a forwarded
// port's bytes) to a blocking file descriptor from a thread of its own, so that the session's
// strand never blocks on a process or a socket that does not read. Writes keep their order;
// Close() (stdin's end) runs after the writes queued before it.
// Thread safety: every method may be called from any thread. The fd is not owned: on_close
// is called (on the writer's thread) when the queue reaches a Close(), after a failed write,
// or at Stop(), once, and must release it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pjemu::apiserver {

class FdWriter {
 public:
  FdWriter(int fd, std::function<void()> on_close);
  ~FdWriter();  // Stop()
  FdWriter(const FdWriter&) = delete;
  FdWriter& operator=(const FdWriter&) = delete;

  void Write(std::string data);
  void Close();
  // Drops what is queued and ends the thread (a write in progress is not interrupted:
  // on_close releasing the fd, or the reader going away, ends it).
  void Stop();

 private:
  void Run();

  int fd_;
  std::function<void()> on_close_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // GUARDED_BY(mu_)
  bool closing_ = false;           // GUARDED_BY(mu_)
  bool stopped_ = false;           // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace pjemu::apiserver
