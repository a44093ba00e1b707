#include "emulator/cli/pod_log_followers.h"

#include <atomic>
#include <condition_variable>
#include <thread>

namespace pjemu::cli {

struct PodLogFollowers::Follower {
  std::mutex mu;
  std::condition_variable cv;
  std::string text;  // GUARDED_BY(mu)
  std::atomic<bool> stop{false};
  bool done = false;  // GUARDED_BY(mu): the thread has returned
};

namespace {

// Follows target until stopped: each stream's text replaces the last one's once it delivers.
void Follow(client::HttpClientOptions options, std::string target,
            std::shared_ptr<PodLogFollowers::Follower> f) {
  client::HttpClient http(std::move(options));
  while (!f->stop) {
    bool fresh = true;
    // Not under f->mu while blocked: Read and the destructor take it.
    (void)http.Stream(target, [&](std::string_view data) {
      std::lock_guard<std::mutex> lock(f->mu);
      if (fresh) f->text.clear();
      fresh = false;
      f->text.append(data);
      return !f->stop.load();
    }, "text/plain, */*");
    std::unique_lock<std::mutex> lock(f->mu);
    f->cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return f->stop.load(); });
  }
  std::lock_guard<std::mutex> lock(f->mu);
  f->done = true;
  f->cv.notify_all();
}

}  // namespace

PodLogFollowers::PodLogFollowers(client::HttpClientOptions options)
    : options_(std::move(options)) {}

PodLogFollowers::~PodLogFollowers() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, f] : followers_) {
    std::lock_guard<std::mutex> flock(f->mu);
    f->stop = true;
    f->cv.notify_all();
  }
  // A bounded wait, so that a follower blocked on a silent stream cannot hold up the exit; the
  // others end within their next reconnect pause.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (auto& entry : followers_) {
    Follower& f = *entry.second;
    std::unique_lock<std::mutex> flock(f.mu);
    f.cv.wait_until(flock, until, [&f] { return f.done; });
  }
}

std::string PodLogFollowers::Read(const std::string& ns, const std::string& pod,
                                  const std::string& container) {
  std::shared_ptr<Follower> f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = followers_[ns + "/" + pod + "/" + container];
    if (!slot) {
      slot = std::make_shared<Follower>();
      std::string target = client::HttpClient::PathOf(api::Pods(), ns, pod) + "/log";
      if (!container.empty()) target += "?container=" + client::HttpClient::QueryEscape(container);
      // What is there now, so that the first read is not empty; the follower takes over.
      auto now = client::HttpClient(options_).Request("GET", target, {}, {}, "text/plain, */*");
      if (now.ok() && now->status == 200) slot->text = now->body;
      target += container.empty() ? "?follow=true" : "&follow=true";
      std::thread(Follow, options_, std::move(target), slot).detach();
    }
    f = slot;
  }
  std::lock_guard<std::mutex> lock(f->mu);
  return f->text;
}

}  // namespace pjemu::cli
