// BatchThread: a thread of its own that runs `work` on the batches of jobs handed to it, in the
// order handed, for owners whose callers must not wait for that work (the store's and the
// kubelet's packing of JSON trees: store/slot.h, kubelet/warm_pods.h). The thread starts with
// the first Submit. After `work` returns, the batch's jobs are destroyed on the thread (what
// they alone held is freed there, not on the caller's thread).
// Thread safety: Submit, Flush and Stop from any thread but `work`'s; `work` runs on the thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace pjemu {

template <typename Job>
class BatchThread {
 public:
  using Work = std::function<void(std::vector<Job>&)>;
  explicit BatchThread(Work work) : work_(std::move(work)) {}
  ~BatchThread() { Stop(); }
  BatchThread(const BatchThread&) = delete;
  BatchThread& operator=(const BatchThread&) = delete;

  // Hands `jobs` over; a no-op after Stop.
  void Submit(std::vector<Job> jobs) {
    if (jobs.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    in_flight_ += jobs.size();
    std::move(jobs.begin(), jobs.end(), std::back_inserter(queue_));
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
    cv_.notify_one();
  }
  // Waits until `work` has returned for every job handed so far (or Stop).
  void Flush() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return in_flight_ == 0 || stop_; });
  }
  // Ends the thread, dropping the jobs it has not started; waits for the batch under way.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    idle_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    while (true) {
      std::vector<Job> jobs;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        jobs.swap(queue_);
      }
      work_(jobs);
      const std::size_t n = jobs.size();
      jobs.clear();
      std::lock_guard<std::mutex> lock(mu_);
      in_flight_ -= n;
      if (in_flight_ == 0) idle_cv_.notify_all();
    }
  }

  const Work work_;
  std::mutex mu_;  // guards the four below
  std::condition_variable cv_, idle_cv_;
  std::vector<Job> queue_;
  std::size_t in_flight_ = 0;  // handed over, `work` not returned yet
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pjemu
