#include "emulator/kubelet/image_pulls.h"

#include <chrono>

namespace pjemu::kubelet {
namespace {

Duration Scaled(Duration d, double scale) {
  return std::chrono::duration_cast<Duration>(d * scale);
}

}  // namespace

ImagePulls::ImagePulls(EventLoop& loop, image::ImageService& service, double scale)
    : loop_(loop),
      service_(service),
      initial_(Scaled(10s, scale)),
      max_(Scaled(300s, scale)),
      thread_([this] { Run(); }) {}

ImagePulls::~ImagePulls() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ImagePulls::Pull(const api::ImageReference& ref, image::Keyring keyring, Done done) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = ref.String();
  if (running_ == key && running_done_) {
    running_done_->push_back(std::move(done));
    return;
  }
  for (Job& job : queue_) {
    if (job.ref.String() == key) {
      job.done.push_back(std::move(done));
      return;
    }
  }
  queue_.push_back(Job{ref, std::move(keyring), {std::move(done)}, std::chrono::steady_clock::now()});
  cv_.notify_one();
}

void ImagePulls::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_ = job.ref.String();
    running_done_ = &job.done;
    lock.unlock();
    PullOutcome outcome;
    auto start = std::chrono::steady_clock::now();
    outcome.image = service_.Pull(job.ref, job.keyring, &outcome.stats);
    auto end = std::chrono::steady_clock::now();
    outcome.took = std::chrono::duration_cast<Duration>(end - start);
    outcome.waited = std::chrono::duration_cast<Duration>(end - job.queued);
    lock.lock();
    running_.clear();
    running_done_ = nullptr;
    if (stop_) return;
    std::vector<Done> done = std::move(job.done);
    loop_.Post([done = std::move(done), outcome] {
      for (const Done& d : done) d(outcome);
    });
  }
}

bool ImagePulls::InBackOff(const std::string& key) const {
  auto it = backoff_.find(key);
  return it != backoff_.end() && loop_.Now() - it->second.updated < it->second.window;
}

Duration ImagePulls::Failed(const std::string& key) {
  const Time now = loop_.Now();
  auto it = backoff_.find(key);
  if (it == backoff_.end() || now - it->second.updated > 2 * max_) {
    backoff_[key] = Entry{initial_, now};
    return initial_;
  }
  it->second.window = std::min(it->second.window * 2, max_);
  it->second.updated = now;
  return it->second.window;
}

Time ImagePulls::BackOffEnd(const std::string& key) const {
  auto it = backoff_.find(key);
  return it == backoff_.end() ? loop_.Now() : it->second.updated + it->second.window;
}

}  // namespace pjemu::kubelet
