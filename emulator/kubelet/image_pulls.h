// ImagePulls: the node's image manager around the image store (image::ImageService): pulls
// run on a thread of their own, one at a time (the kubelet's serialized pulls,
// maxParallelImagePulls 1), and several containers asking for one reference while its pull is
// queued or running share it; each result is posted back to the kubelet's EventLoop. Beside
// it, the pull back-off of pkg/kubelet/images: per `<pod uid>_<image>`, 10 s after the first
// failure, doubling to 5 min, forgotten 10 min after its last update (`scale` shrinks every
// duration for tests, as KubeletOptions::backoff_scale does for CrashLoopBackOff).
// Thread safety: Pull, InBackOff, Failed and Forget on the EventLoop thread; the pull thread
// touches only its queue (under its mutex) and the service.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emulator/common/event_loop.h"
#include "emulator/image/image_service.h"

namespace pjemu::kubelet {

struct PullOutcome {
  Result<image::ImageRecord> image = Status(Code::kInternal, "not pulled");
  Duration took{0};       // the pull itself
  Duration waited{0};     // queued behind other pulls, plus the pull
  image::PullStats stats;
};

class ImagePulls {
 public:
  using Done = std::function<void(const PullOutcome&)>;
  // service must outlive this object.
  ImagePulls(EventLoop& loop, image::ImageService& service, double scale = 1.0);
  // Waits for the pull in flight (its result is dropped) and ends the thread.
  ~ImagePulls();

  image::ImageService& service() { return service_; }
  // Queues a pull of ref (or joins the one queued or running for the same reference); `done`
  // runs on the EventLoop with the outcome.
  void Pull(const api::ImageReference& ref, image::Keyring keyring, Done done);

  // Back-off (key: "<pod uid>_<image as written>").
  bool InBackOff(const std::string& key) const;
  // Records a failed pull: the window before the next try.
  Duration Failed(const std::string& key);
  // When the current window of key ends (now when none).
  Time BackOffEnd(const std::string& key) const;
  void Forget(const std::string& key) { backoff_.erase(key); }

 private:
  struct Job {
    api::ImageReference ref;
    image::Keyring keyring;
    std::vector<Done> done;
    std::chrono::steady_clock::time_point queued{};
  };
  struct Entry {
    Duration window{0};
    Time updated{};
  };
  void Run();

  EventLoop& loop_;
  image::ImageService& service_;
  Duration initial_, max_;
  std::map<std::string, Entry> backoff_;  // EventLoop thread
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;           // GUARDED_BY(mu_)
  std::string running_;             // GUARDED_BY(mu_): the reference being pulled
  std::vector<Done>* running_done_ = nullptr;  // GUARDED_BY(mu_): its waiters
  bool stop_ = false;               // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace pjemu::kubelet
