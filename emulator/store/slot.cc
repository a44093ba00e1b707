#include "emulator/store/slot.h"

#include <algorithm>
#include <vector>

#include "emulator/common/packed_json.h"

namespace pjemu::store {

ObjectPtr Slot::Tree() const {
  if (tree_) return tree_;
  tree_ = UnpackShared(packed_, "a packed stored object");
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
  if (period_ == 0 || fresh_.size() < std::max(period_, aging_.size() / 2)) return;
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
  packer_.Submit(std::move(jobs));
}

// The trees no one holds any more are freed after this, on the packing thread, outside the
// store's mutex (BatchThread destroys the batch's jobs there).
void SlotSweeper::Pack(std::vector<Job>& jobs) {
  for (Job& job : jobs) {
    if (job.encode) job.packed = PackJson(*job.tree);
  }
  std::lock_guard<std::mutex> lock(mu_);
  Install(jobs);
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

void SlotSweeper::Flush() { packer_.Flush(); }

void SlotSweeper::Stop() { packer_.Stop(); }

}  // namespace pjemu::store
