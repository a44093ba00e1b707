// WorkQueue: client-go's rate-limited work queue on the EventLoop. Keys are de-duplicated while
// waiting; AddAfter keeps the earliest pending time per key; AddRateLimited backs off per key
// exponentially (base * 2^failures, capped) until Forget. The handler runs as an EventLoop task.
// Thread safety: call from the EventLoop thread only (the Controller posts watch events there).
#pragma once

#include <functional>
#include <map>
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

  // Runs the handler for request as soon as possible (once, however often it is added).
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
  struct Timer {
    Time due;
    EventLoop::TimerId id;
  };
  EventLoop& loop_;
  Handler handler_;
  BackoffOptions backoff_;
  bool shut_down_ = false;
  std::map<Request, EventLoop::TimerId> ready_;  // waiting to run now
  std::map<Request, Timer> delayed_;             // waiting for a time
  std::map<Request, int> failures_;
};

}  // namespace pjemu::controller
