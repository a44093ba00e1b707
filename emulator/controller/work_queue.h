// WorkQueue: client-go's rate-limited work queue on the EventLoop. Keys are de-duplicated while
// waiting and run in the order they were added; AddAfter keeps the earliest pending time per key;
// AddRateLimited backs off per key exponentially (base * 2^failures, capped) until Forget.
// One key runs per loop turn: the queue keeps at most one task posted, and posts the next one
// after the handler returns, behind what the handler's writes posted (the informers' drains). So
// with thousands of keys ready at once (every job submitted together) the watchers keep up with
// each reconcile's writes instead of falling thousands of events behind, pinning old versions.
// A turn is due at the loop's now, behind the timers already due then: what the other actors do
// at one instant (a kubelet moving each of a job's pods on, the scheduler binding them) reaches a
// key's reconcile together, as a controller's queue coalesces the events that arrive while a key
// waits, rather than one reconcile per pod.
// Thread safety: call from the EventLoop thread only (the Controller posts watch events there).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "emulator/common/event_loop.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::controller {

struct BackoffOptions {
  Duration base = 5ms;  // controller-runtime's default per-item limiter
  Duration max = 1000s;
};

class WorkQueue {
 public:
  using Handler = std::function<void(const Request&)>;
  WorkQueue(EventLoop& loop, Handler handler, BackoffOptions backoff = {});
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Runs the handler for request in its turn (once, however often it is added meanwhile).
  void Add(const Request& request);
  // Adds after `delay` (<= 0: now); an earlier pending time for the key wins.
  void AddAfter(const Request& request, Duration delay);
  // Adds after the key's next backoff delay.
  void AddRateLimited(const Request& request);
  // Clears the key's failure count.
  void Forget(const Request& request);
  int NumRequeues(const Request& request) const;
  // Cancels everything pending; later adds are ignored.
  void ShutDown();

 private:
  // Posts the turn task unless one is posted.
  void PostTurn();
  // Runs the oldest ready key, then posts the next turn when keys are left.
  void Turn();

  struct Timer {
    Time due;
    EventLoop::TimerId id;
  };
  EventLoop& loop_;
  Handler handler_;
  BackoffOptions backoff_;
  bool shut_down_ = false;
  std::deque<Request> ready_;                    // waiting to run, in the order added
  std::set<Request> ready_keys_;                 // the same keys, for de-duplication
  EventLoop::TimerId turn_ = 0;                  // the posted turn; 0 = none
  std::map<Request, Timer> delayed_;             // waiting for a time
  std::map<Request, int> failures_;
};

}  // namespace pjemu::controller
