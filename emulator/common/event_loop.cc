#include "emulator/common/event_loop.h"

#include <thread>

namespace pjemu {

EventLoop::TimerId EventLoop::PostAt(Time due, Task task) {
  TimerId id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    queue_.emplace(std::make_pair(due, id), std::move(task));
    due_of_[id] = due;
  }
  cv_.notify_all();
  return id;
}

void EventLoop::Cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = due_of_.find(id);
  if (it == due_of_.end()) return;
  queue_.erase(std::make_pair(it->second, id));
  due_of_.erase(it);
}

bool EventLoop::RunOneDue() {
  Task task;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty() || queue_.begin()->first.first > clock_.Now()) return false;
    auto it = queue_.begin();
    task = std::move(it->second);
    due_of_.erase(it->first.second);
    queue_.erase(it);
  }
  task();
  return true;
}

std::size_t EventLoop::RunUntilIdle() {
  std::size_t n = 0;
  while (RunOneDue()) ++n;
  return n;
}

void EventLoop::RunFor(Duration d) {
  auto* fake = dynamic_cast<FakeClock*>(&clock_);
  const Time end = clock_.Now() + d;
  RunUntilIdle();
  while (true) {
    Time next = NextDue();
    if (next > end) break;
    if (fake && next > fake->Now()) fake->Set(next);
    RunUntilIdle();
  }
  if (fake && fake->Now() < end) fake->Set(end);
  RunUntilIdle();
}

bool EventLoop::RunUntil(const std::function<bool()>& pred, Duration max) {
  const Time end = clock_.Now() + max;
  auto* fake = dynamic_cast<FakeClock*>(&clock_);
  while (true) {
    RunUntilIdle();
    if (pred()) return true;
    if (clock_.Now() >= end || stopped()) return pred();
    Time next = NextDue();
    if (fake) {
      if (next == Time::max()) return pred();
      fake->Set(std::min(std::max(next, fake->Now()), end));
    } else {
      std::unique_lock<std::mutex> lock(mu_);
      const Time now = clock_.Now();
      // A task posted since RunUntilIdle (by pred, or by another thread) is due now: run it.
      // (Waiting here instead computed Time::min() - now, which overflows into a huge wait.)
      if (!queue_.empty() && queue_.begin()->first.first <= now) continue;
      // Re-check pred at least every 50 ms: it may read state other threads change.
      Time wake = std::min(end, now + std::chrono::milliseconds(50));
      if (!queue_.empty()) wake = std::min(wake, queue_.begin()->first.first);
      if (wake > now) cv_.wait_for(lock, wake - now);
    }
  }
}

void EventLoop::Run() {
  while (true) {
    RunUntilIdle();
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    if (!queue_.empty() && queue_.begin()->first.first <= clock_.Now()) continue;
    if (queue_.empty()) {
      cv_.wait(lock);
    } else {
      auto wait = queue_.begin()->first.first - clock_.Now();
      cv_.wait_for(lock, wait);
    }
  }
}

void EventLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

bool EventLoop::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

Time EventLoop::NextDue() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() ? Time::max() : queue_.begin()->first.first;
}

std::size_t EventLoop::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace pjemu
