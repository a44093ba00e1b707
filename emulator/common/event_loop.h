// EventLoop: the single-threaded task and timer queue that every control-plane actor
// (controller, scheduler, kubelet, fault injector) runs on. Tasks run one at a time in
// (due time, post order), so a run with a FakeClock replays exactly.
//  - Virtual time (FakeClock): RunUntilIdle() runs every task due now; RunFor(d) jumps the
//    clock from timer to timer up to now + d. Nothing sleeps.
//  - Real time (RealClock): Run() blocks, waiting on a condition variable until the next timer
//    is due or a task is posted, until Stop().
// Thread safety: Post/PostAt/PostAfter/Cancel/Stop may be called from any thread (watch
// notifications arrive from API server threads); Run* must be called from one thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "emulator/common/clock.h"

namespace pjemu {

class EventLoop {
 public:
  using Task = std::function<void()>;
  using TimerId = std::uint64_t;

  explicit EventLoop(Clock& clock) : clock_(clock) {}
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Clock& clock() const { return clock_; }
  Time Now() const { return clock_.Now(); }

  // Runs task as soon as possible, after tasks already due.
  TimerId Post(Task task) { return PostAt(Time::min(), std::move(task)); }
  TimerId PostAt(Time due, Task task);
  TimerId PostAfter(Duration delay, Task task) { return PostAt(Now() + delay, std::move(task)); }
  // Cancels a task that has not run yet; a no-op otherwise.
  void Cancel(TimerId id);

  // Virtual or real: runs every task that is due now (including ones they post for now).
  // Returns the number of tasks run.
  std::size_t RunUntilIdle();
  // Virtual time only: advances the FakeClock timer by timer through now + d, running tasks.
  // REQUIRES: clock().IsVirtual().
  void RunFor(Duration d);
  // Virtual time: runs until pred() is true or no task is left or max virtual time elapsed;
  // returns pred(). Real time: waits (blocking) the same way.
  bool RunUntil(const std::function<bool()>& pred, Duration max);

  // Real time: blocks running tasks until Stop() is called.
  void Run();
  void Stop();
  bool stopped() const;

  // Time of the earliest pending task, or Time::max() when none.
  Time NextDue() const;
  std::size_t pending() const;

 private:
  // Pops and runs one due task; false when none is due.
  bool RunOneDue();

  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::pair<Time, TimerId>, Task> queue_;  // GUARDED_BY(mu_)
  std::map<TimerId, Time> due_of_;                        // GUARDED_BY(mu_)
  TimerId next_id_ = 1;                                   // GUARDED_BY(mu_)
  bool stop_ = false;                                     // GUARDED_BY(mu_)
};

}  // namespace pjemu
