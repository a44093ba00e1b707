#include "emulator/controller/work_queue.h"

#include <algorithm>

namespace pjemu::controller {

WorkQueue::WorkQueue(EventLoop& loop, Handler handler, BackoffOptions backoff)
    : loop_(loop), handler_(std::move(handler)), backoff_(backoff) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::Add(const Request& request) {
  if (shut_down_ || !ready_keys_.insert(request).second) return;
  ready_.push_back(request);
  PostTurn();
}

void WorkQueue::PostTurn() {
  if (turn_ != 0 || ready_.empty() || shut_down_) return;
  // Due now rather than posted: posted tasks (the informers' drains) run ahead of it as before,
  // and so do the timers already due now (kubelets and the scheduler acting at this instant).
  turn_ = loop_.PostAt(loop_.Now(), [this] { Turn(); });
}

void WorkQueue::Turn() {
  turn_ = 0;
  if (ready_.empty()) return;
  Request request = std::move(ready_.front());
  ready_.pop_front();
  ready_keys_.erase(request);
  handler_(request);
  PostTurn();  // behind the tasks the handler's writes posted
}

void WorkQueue::AddAfter(const Request& request, Duration delay) {
  if (shut_down_) return;
  if (delay <= Duration::zero()) {
    Add(request);
    return;
  }
  const Time due = loop_.Now() + delay;
  auto it = delayed_.find(request);
  if (it != delayed_.end()) {
    if (it->second.due <= due) return;
    loop_.Cancel(it->second.id);
  }
  EventLoop::TimerId id = loop_.PostAt(due, [this, request] {
    delayed_.erase(request);
    Add(request);
  });
  delayed_[request] = Timer{due, id};
}

void WorkQueue::AddRateLimited(const Request& request) {
  int n = failures_[request]++;
  Duration delay = backoff_.base;
  for (int i = 0; i < n && delay < backoff_.max; ++i) delay *= 2;
  AddAfter(request, std::min(delay, backoff_.max));
}

void WorkQueue::Forget(const Request& request) { failures_.erase(request); }

int WorkQueue::NumRequeues(const Request& request) const {
  auto it = failures_.find(request);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::ShutDown() {
  shut_down_ = true;
  if (turn_ != 0) loop_.Cancel(turn_);
  turn_ = 0;
  for (const auto& [req, timer] : delayed_) loop_.Cancel(timer.id);
  ready_.clear();
  ready_keys_.clear();
  delayed_.clear();
}

}  // namespace pjemu::controller
