#include "emulator/kubelet/warm_pods.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "emulator/common/packed_json.h"

namespace pjemu::kubelet {

WarmPods::WarmPods(EventLoop& loop, std::size_t capacity) : loop_(loop), capacity_(capacity) {}

WarmPods::~WarmPods() {
  if (park_task_) loop_.Cancel(park_task_);
  packer_.Stop();  // joined: the thread no longer reads alive_
  alive_.reset();  // an Install task it posted finds nothing to do
}

void WarmPods::Touch(Parkable* p) {
  parking_.erase(p);
  auto it = where_.find(p);
  if (it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
  } else {
    lru_.push_front(p);
    where_.emplace(p, lru_.begin());
  }
  // A quarter over capacity before a pass: a pass (and its task) per many reads, not per read.
  if (park_task_ || lru_.size() <= capacity_ + capacity_ / 4) return;
  park_task_ = loop_.Post([this] {
    park_task_ = 0;
    ParkBeyondCapacity();
  });
}

void WarmPods::Forget(Parkable* p) {
  parking_.erase(p);
  auto it = where_.find(p);
  if (it == where_.end()) return;
  lru_.erase(it->second);
  where_.erase(it);
}

void WarmPods::ParkBeyondCapacity() {
  std::vector<Job> jobs;
  while (lru_.size() > capacity_) {
    Parkable* p = lru_.back();
    lru_.pop_back();
    where_.erase(p);
    if (auto tree = p->ParkingTree()) {
      parking_[p] = tree;
      jobs.push_back({p, std::move(tree), ""});
    }
  }
  packer_.Submit(std::move(jobs));
}

void WarmPods::Pack(std::vector<Job>& jobs) {
  // Jobs of no one are trees Install handed back: freed here, with the batch.
  auto kept = std::stable_partition(jobs.begin(), jobs.end(), [](const Job& j) { return j.who; });
  if (kept == jobs.begin()) return;
  for (auto it = jobs.begin(); it != kept; ++it) it->packed = PackJson(*it->tree);
  std::lock_guard<std::mutex> lock(mu_);
  const bool post = done_.empty();  // else an Install task is already on its way
  std::move(jobs.begin(), kept, std::back_inserter(done_));
  if (!post) return;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    if (!alive.expired()) Install();
  });
}

void WarmPods::Install() {
  std::vector<Job> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(done_);
  }
  for (Job& job : done) {
    auto it = parking_.find(job.who);
    // Read or replaced since (Touch), or going (Forget): it keeps its tree.
    if (it == parking_.end() || it->second != job.tree) continue;
    parking_.erase(it);
    if (!job.packed.empty()) job.who->Parked(std::move(job.packed));
  }
  // A parked pod's tree is freed on the packing thread, not here on the loop's.
  for (Job& job : done) job.who = nullptr, job.packed.clear();
  packer_.Submit(std::move(done));
}

void WarmPods::Flush() {
  packer_.Flush();
  Install();
}

}  // namespace pjemu::kubelet
