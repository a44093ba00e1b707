#include "emulator/store/slot.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "emulator/common/packed_json.h"

namespace pjemu::store {

ObjectPtr Slot::Tree() const {
  if (tree_) return tree_;
  tree_ = std::make_shared<const Json>(UnpackJson(packed_, "a packed stored object"));
  if (sweeper_) sweeper_->Fresh(std::const_pointer_cast<Slot>(shared_from_this()));
  return tree_;
}

SlotSweeper::~SlotSweeper() { Stop(); }

SlotPtr SlotSweeper::Make(ObjectPtr tree) {
  auto slot = std::make_shared<Slot>(std::move(tree), period_ > 0 ? this : nullptr);
  Fresh(slot);
  return slot;
}

void SlotSweeper::Fresh(const SlotPtr& slot) {
  if (period_ == 0) return;
  fresh_.push_back(slot);
}

void SlotSweeper::MaybeSweep() {
  if (period_ == 0 || fresh_.size() < std::max(period_, aging_.size() / 4)) return;
  std::vector<std::weak_ptr<Slot>> held;
  std::vector<Job> jobs;
  for (auto& weak : aging_) {
    SlotPtr slot = weak.lock();
    if (!slot || slot->packed()) continue;  // gone, or packed (a read makes it fresh again)
    if (slot->tree_.use_count() != 1) {
      held.push_back(std::move(weak));
      continue;
    }
    jobs.push_back({std::move(weak), slot->tree_, slot->packed_.empty(), ""});
  }
  held.insert(held.end(), fresh_.begin(), fresh_.end());
  aging_ = std::move(held);
  fresh_.clear();
  if (jobs.empty()) return;
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (stop_) return;
  in_flight_ += jobs.size();
  std::move(jobs.begin(), jobs.end(), std::back_inserter(queue_));
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  queue_cv_.notify_one();
}

void SlotSweeper::Run() {
  while (true) {
    std::vector<Job> jobs;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      jobs.swap(queue_);
    }
    for (Job& job : jobs) {
      if (job.encode) job.packed = PackJson(*job.tree);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      Install(jobs);
    }
    std::size_t n = jobs.size();
    jobs.clear();  // the trees no one holds any more are freed here, outside the store's mutex
    std::lock_guard<std::mutex> lock(queue_mu_);
    in_flight_ -= n;
    if (in_flight_ == 0) idle_cv_.notify_all();
  }
}

void SlotSweeper::Install(std::vector<Job>& done) {
  for (Job& job : done) {
    SlotPtr slot = job.slot.lock();
    if (!slot || slot->tree_ != job.tree) continue;
    if (job.encode) {
      if (job.packed.empty()) continue;  // not packable: stays a tree
      slot->packed_ = std::move(job.packed);
    }
    if (slot->tree_.use_count() == 2) {  // the slot's and this job's
      slot->tree_.reset();
      ++packed_total_;
    } else {
      Fresh(slot);  // a reader took it meanwhile: looked at again later
    }
  }
}

void SlotSweeper::Flush() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  idle_cv_.wait(lock, [this] { return in_flight_ == 0 || stop_; });
}

void SlotSweeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stop_ = true;
    queue_.clear();
  }
  queue_cv_.notify_all();
  idle_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace pjemu::store
