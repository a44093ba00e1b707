#include "emulator/store/slot.h"

#include <algorithm>
#include <vector>

#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/common/packed_json.h"

namespace pjemu::store {

ObjectPtr Slot::Tree() const {
  if (tree_) return tree_;
  tree_ = UnpackShared(packed_, "a packed stored object");
  if (sweeper_) sweeper_->Fresh(std::const_pointer_cast<Slot>(shared_from_this()));
  return tree_;
}

namespace {

// `raw` (a version without managedFields) with the packed managedFields `managed` (or none).
ObjectPtr WithManaged(const Json& raw, const std::string& managed) {
  Json served = raw;
  Json fields = UnpackJson(managed, "packed managedFields");
  if (!fields.is_null()) served["metadata"]["managedFields"] = std::move(fields);
  return std::make_shared<const Json>(std::move(served));
}

// The managedFields of `served` (null for none), packed with their own dictionary.
std::string PackManaged(const Json& served) {
  return PackJson(api::Field(api::Field(served, "metadata"), "managedFields"), "managedFields");
}

// `raw` with the managedFields its deferred write computes over `before` (served; null: none);
// `managed` gets them, packed.
ObjectPtr Computed(const Json& raw, const Deferred& deferred, const Json* before,
                   std::string& managed) {
  Json next = raw;
  api::UpdateManagedFields(*deferred.type, before, next, deferred.write);
  api::CompactManagedFields(next);
  managed = PackManaged(next);
  return std::make_shared<const Json>(std::move(next));
}

}  // namespace

ObjectPtr Slot::Served() const {
  if (deferred_) {
    std::vector<const Slot*> chain;  // newest first
    const Slot* s = this;
    for (; s && s->deferred_; s = s->deferred_->before.get()) chain.push_back(s);
    ObjectPtr served = s ? s->Served() : nullptr;  // what the oldest was written over, if any
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) served = (*it)->Resolve(served.get());
    return served;
  }
  if (managed_.empty()) return Tree();
  if (ObjectPtr held = served_.lock()) return held;
  ObjectPtr served = WithManaged(*Tree(), managed_);
  served_ = served;
  return served;
}

ObjectPtr Slot::Resolve(const Json* before) const {
  std::string managed;
  ObjectPtr served = Computed(*Tree(), *deferred_, before, managed);
  KeepManaged(std::move(managed));
  served_ = served;
  return served;
}

void Slot::KeepManaged(std::string managed) const {
  managed_ = std::move(managed);
  deferred_.reset();
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
    Job job;
    job.slot = std::move(weak);
    job.tree = slot->tree_;
    job.encode = slot->packed_.empty();
    if (slot->deferred_) PrepareDeferred(*slot, job);
    jobs.push_back(std::move(job));
  }
  held.insert(held.end(), fresh_.begin(), fresh_.end());
  aging_ = std::move(held);
  fresh_.clear();
  packer_.Submit(std::move(jobs));
}

void SlotSweeper::PrepareDeferred(const Slot& slot, Job& job) {
  job.deferred = slot.deferred_;
  job.id = &slot;
  const Slot* before = job.deferred->before.get();
  if (!before) return;  // a base of none
  if (before->deferred_) {
    job.chained = true;
    return;
  }
  if (before->tree_) {
    job.base = before->tree_;
  } else {
    job.base_packed = before->packed_;
  }
  job.base_managed = before->managed_;
}

ObjectPtr SlotSweeper::ComputeDeferred(Job& job,
                                       const std::unordered_map<const Slot*, ObjectPtr>& computed) {
  ObjectPtr base = job.base;
  if (job.chained) {
    auto it = computed.find(job.deferred->before.get());
    if (it == computed.end()) return nullptr;  // not computed yet: this one waits too
    base = it->second;
  } else {
    if (!job.base_packed.empty()) base = UnpackShared(job.base_packed, "a packed stored object");
    if (base && !job.base_managed.empty()) base = WithManaged(*base, job.base_managed);
  }
  return Computed(*job.tree, *job.deferred, base.get(), job.managed);
}

// The trees no one holds any more are freed after this, on the packing thread, outside the
// store's mutex (BatchThread destroys the batch's jobs there).
void SlotSweeper::Pack(std::vector<Job>& jobs) {
  std::unordered_map<const Slot*, ObjectPtr> computed;  // this batch's, for chained jobs
  for (Job& job : jobs) {
    if (job.deferred) {
      ObjectPtr served = ComputeDeferred(job, computed);
      if (!served) continue;
      computed.emplace(job.id, std::move(served));
      job.deferred_done = true;
    }
    if (job.encode) job.packed = PackJson(*job.tree);
  }
  computed.clear();  // freed here, outside the mutex
  std::lock_guard<std::mutex> lock(mu_);
  Install(jobs);
}

void SlotSweeper::Install(std::vector<Job>& done) {
  for (Job& job : done) {
    SlotPtr slot = job.slot.lock();
    if (!slot || slot->tree_ != job.tree) continue;
    if (job.deferred) {
      if (slot->deferred_ != job.deferred) continue;  // computed meanwhile (Served): done
      if (!job.deferred_done) {  // its base was not ready: looked at again later
        Fresh(slot);
        continue;
      }
      slot->KeepManaged(std::move(job.managed));  // what it was written over: freed with the job
    }
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
