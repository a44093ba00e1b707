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

// `raw` (a version without managedFields) with the managedFields `fields` (null: none).
ObjectPtr WithFields(const Json& raw, Json fields) {
  Json served = raw;
  if (!fields.is_null()) served["metadata"]["managedFields"] = std::move(fields);
  return std::make_shared<const Json>(std::move(served));
}

// `raw` with the packed managedFields `managed` (or none).
ObjectPtr WithManaged(const Json& raw, const std::string& managed) {
  return WithFields(raw, UnpackJson(managed, "packed managedFields"));
}

// The managedFields `version` holds itself (null: none).
const Json& OwnManaged(const Json& version) {
  return api::Field(api::Field(version, "metadata"), "managedFields");
}

// The managedFields (null: none) that the deferred write computes for `raw` over `before`,
// whose managedFields are `before_managed` (null: none): no version is copied.
Json ManagedOver(const Json& raw, const Deferred& deferred, const Json& before,
                 const Json& before_managed) {
  return api::ManagedFieldsAfterUpdate(*deferred.type, before, before_managed, raw, deferred.write);
}

std::string PackManaged(const Json& fields) { return PackJson(fields, "managedFields"); }

}  // namespace

ObjectPtr Slot::Served() const {
  if (deferred_) {
    std::vector<const Slot*> chain;  // newest first
    const Slot* s = this;
    for (; s->deferred_; s = s->deferred_->before.get()) chain.push_back(s);
    ObjectPtr served = s->Served();  // what the oldest was written over
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) served = (*it)->Resolve(*served);
    return served;
  }
  if (managed_.empty()) return Tree();
  if (ObjectPtr held = served_.lock()) return held;
  ObjectPtr served = WithManaged(*Tree(), managed_);
  served_ = served;
  return served;
}

ObjectPtr Slot::Resolve(const Json& before) const {
  ObjectPtr raw = Tree();
  Json fields = ManagedOver(*raw, *deferred_, before, OwnManaged(before));
  KeepManaged(PackManaged(fields));
  ObjectPtr served = WithFields(*raw, std::move(fields));
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

bool SlotSweeper::ComputeDeferred(Job& job, std::unordered_map<const Slot*, Resolved>& computed) {
  ObjectPtr base;
  const Json* base_managed;
  Json unpacked_managed;
  if (job.chained) {
    auto it = computed.find(job.deferred->before.get());
    if (it == computed.end()) return false;  // not computed yet: this one waits too
    base = it->second.tree;
    base_managed = &it->second.managed;
  } else {
    base = job.base_packed.empty() ? job.base
                                   : UnpackShared(job.base_packed, "a packed stored object");
    if (job.base_managed.empty()) {
      base_managed = &OwnManaged(*base);
    } else {
      unpacked_managed = UnpackJson(job.base_managed, "packed managedFields");
      base_managed = &unpacked_managed;
    }
  }
  Json fields = ManagedOver(*job.tree, *job.deferred, *base, *base_managed);
  job.managed = PackManaged(fields);
  computed.emplace(job.id, Resolved{job.tree, std::move(fields)});
  return true;
}

// The trees no one holds any more are freed after this, on the packing thread, outside the
// store's mutex (BatchThread destroys the batch's jobs there).
void SlotSweeper::Pack(std::vector<Job>& jobs) {
  std::unordered_map<const Slot*, Resolved> computed;  // this batch's, for chained jobs
  for (Job& job : jobs) {
    if (job.deferred) job.deferred_done = ComputeDeferred(job, computed);
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
