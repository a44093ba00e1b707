// PeriodicThread: runs one function on a thread of its own every `interval` (real time), first
// at once, until Stop. For the samplers that read /proc and cgroups beside the event loop; the
// control plane's timers belong on the EventLoop instead.
// Thread safety: Start and Stop may be called from any thread; Start while running is a no-op,
// Stop waits for a run in progress to end and is idempotent. The function runs on the thread
// only, never two at once. The destructor stops it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace pjemu {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Start(std::chrono::nanoseconds interval, std::function<void()> run) {
    std::lock_guard<std::mutex> control(control_);
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this, interval, run = std::move(run)] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!stop_) {
        lock.unlock();
        run();
        lock.lock();
        cv_.wait_for(lock, interval, [this] { return stop_; });
      }
    });
  }

  void Stop() {
    std::lock_guard<std::mutex> control(control_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex control_;  // serialises Start and Stop (Stop joins under it)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;  // GUARDED_BY(control_)
};

}  // namespace pjemu
