// Slot: one stored version of an object (private to emulator/store), shared by the store's map
// and its watch history. It holds the version as a tree (ObjectPtr) while anyone may read it; once
// no one but the slot holds that tree and it has not been written or decoded for a sweep period,
// the SlotSweeper packs it: the slot keeps the version as packed JSON (common/packed_json.h: an
// eighth to a twentieth of its JSON text once its kind's dictionary is trained, a third to a
// half before) and drops the tree. The next read decodes it again (Tree(), through UnpackShared:
// the tree another holder decoded from the same bytes, a kubelet's unparked pod, is shared), and
// the packed bytes are kept, so packing it again costs nothing.
// This is etcd's and kube-apiserver's arrangement in small: objects at rest as bytes, decoded
// objects only where a reader holds them (the informers' consumers, the actors' caches, a watch's
// queue).
// A version written with Form::kInProcess (store.h) may be deferred: stored without its
// managedFields, with what computes them (Deferred). The packing thread computes them before it
// packs such a version, once the version it was written over has them, and Served() computes them
// at once for a reader that needs them; either way the version it was written over is no longer
// held for it, and the computed managedFields are kept apart, packed: the slot's tree and bytes
// stay the version without them (Tree(), the actors' form), which are the bytes the kubelet's
// parked copy of it packs to, so that the two share one decoded tree; Served() is the version
// with them.
// Thread safety: the Store's mutex guards every slot and the sweeper; the sweeper's packing thread
// takes that mutex to install what it packed.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/api/managed_fields.h"
#include "emulator/api/resources.h"
#include "emulator/common/batch_thread.h"
#include "emulator/store/store.h"

namespace pjemu::store {

class SlotSweeper;
class Slot;

// How a deferred version's managedFields are computed: the write's, from the version it was
// written over (itself possibly deferred).
struct Deferred {
  std::shared_ptr<const Slot> before;  // never null: only updates are deferred
  const api::ResourceType* type = nullptr;
  api::ManagedWrite write;  // stored_form set
  std::size_t depth = 1;    // deferred versions in the chain, this one included
};

class Slot : public std::enable_shared_from_this<Slot> {
 public:
  // `sweeper` (nullable: never packed) must outlive the slot.
  Slot(ObjectPtr tree, SlotSweeper* sweeper) : tree_(std::move(tree)), sweeper_(sweeper) {}

  // The version as a tree, decoded from its packed bytes when it was packed. A copy: the tree
  // stays while the caller holds it, whatever a sweep does meanwhile.
  ObjectPtr Tree() const;
  // The version as the API server serves it: Tree(), with its managedFields, computed first when
  // it is deferred (and those of the deferred versions before it, oldest first). One tree while
  // any reader holds it.
  ObjectPtr Served() const;
  // The version as `form` reads it: Served() or Tree().
  ObjectPtr Read(Form form) const { return form == Form::kServed ? Served() : Tree(); }
  // Marks this new version deferred. REQUIRES: not read yet.
  void Defer(Deferred deferred) {
    deferred_ = std::make_shared<const Deferred>(std::move(deferred));
  }
  // The deferred versions up to this one (0: its managedFields are computed).
  std::size_t deferred_depth() const { return deferred_ ? deferred_->depth : 0; }
  // The tree as it is (null while packed), for the store's own bookkeeping: not a read.
  const ObjectPtr& Unpacked() const { return tree_; }
  bool packed() const { return !tree_; }
  std::size_t packed_bytes() const { return packed_.size(); }

 private:
  friend class SlotSweeper;
  // Computes this deferred version's managedFields over `before` (its predecessor, served) and
  // keeps them apart. Returns the version with them.
  ObjectPtr Resolve(const Json& before) const;
  // Keeps this version's computed managedFields (`managed`, packed) apart; the version it was
  // written over is no longer held for it.
  void KeepManaged(std::string managed) const;

  mutable ObjectPtr tree_;                            // null while packed
  mutable std::string packed_;                        // "" until first packed
  mutable std::shared_ptr<const Deferred> deferred_;  // null: managedFields computed
  // Once a deferred version's managedFields are computed: them (or null), packed; "" otherwise.
  mutable std::string managed_;
  mutable std::weak_ptr<const Json> served_;  // the version with them, while a reader holds it
  SlotSweeper* const sweeper_;
};
using SlotPtr = std::shared_ptr<Slot>;

// Decides when slots are packed, and packs them on a thread of its own: every slot written or
// decoded is `Fresh`; each sweep hands the packing thread the slots that were fresh before the
// previous sweep and that no reader holds, and keeps looking at the held ones in later sweeps. A
// sweep runs once half as many slots turned fresh as the last one kept (and at least
// `period`), so its cost is a constant per write or read; a tree then often outlives a round of
// the controllers' queue and is read again without a decode. The thread encodes and compresses,
// then, under the store's mutex, keeps the bytes in the slot and drops the slot's tree if still
// no reader holds it (one that took it meanwhile makes the slot fresh again); the tree is freed
// on that thread, outside the mutex. The store's thread only ever decodes.
// MaybeSweep runs only where the store holds no bare reference into a slot's tree: after a
// write's changes are recorded, and after a read (whose result holds what it decoded), so that a
// run of reads with no write, such as the controllers' lists of their children, does not pile up
// decoded trees.
class SlotSweeper {
 public:
  // `mu` guards the slots; the packing thread (started by the first sweep with work) takes it.
  SlotSweeper(std::size_t period, std::mutex& mu) : period_(period), mu_(mu) {}
  ~SlotSweeper();  // Stop()
  SlotSweeper(const SlotSweeper&) = delete;
  SlotSweeper& operator=(const SlotSweeper&) = delete;

  SlotPtr Make(ObjectPtr tree);  // a new fresh slot (never packed when period is 0)
  void Fresh(const SlotPtr& slot);
  void MaybeSweep();
  // Waits until the packing thread has installed everything handed to it. REQUIRES: mu not held.
  void Flush();
  // Ends the packing thread, dropping what it has not packed. REQUIRES: mu not held.
  void Stop();
  std::size_t packed_total() const { return packed_total_; }  // trees dropped so far

 private:
  struct Job {
    std::weak_ptr<Slot> slot;
    ObjectPtr tree;      // the slot's, held until installed
    bool encode = true;  // false: the slot has its bytes already
    std::string packed;
    // A deferred slot: its managedFields are computed first, over the version it was written
    // over when that had them (its tree `base`, else its bytes `base_packed`, with its
    // managedFields `base_managed` when kept apart), or over the version an earlier job of the
    // batch computed (`chained`); `managed` is them, packed. No version is copied for it.
    std::shared_ptr<const Deferred> deferred;
    const Slot* id = nullptr;  // the slot, as the key a later job's `chained` looks up
    bool chained = false;
    ObjectPtr base;
    std::string base_packed, base_managed;
    bool deferred_done = false;  // false: its base was not ready: looked at again later
    std::string managed;
  };
  // Fills a deferred slot's job from its record. REQUIRES: mu held.
  static void PrepareDeferred(const Slot& slot, Job& job);
  // A version this batch computed the managedFields of: its tree (without them) and them.
  struct Resolved {
    ObjectPtr tree;
    Json managed;  // null: none
  };
  // The packing thread's computation of a deferred job's managedFields (into Job::managed, and
  // into `computed` for the jobs chained to it): false when its base is not ready.
  static bool ComputeDeferred(Job& job, std::unordered_map<const Slot*, Resolved>& computed);
  void Pack(std::vector<Job>& jobs);     // the packing thread's work: encode, then Install
  void Install(std::vector<Job>& done);  // REQUIRES: mu held

  const std::size_t period_;
  std::mutex& mu_;
  std::vector<std::weak_ptr<Slot>> fresh_, aging_;
  std::size_t packed_total_ = 0;
  BatchThread<Job> packer_{[this](std::vector<Job>& jobs) { Pack(jobs); }};  // last: stops first
};

}  // namespace pjemu::store
