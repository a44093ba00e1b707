// Slot: one stored version of an object (private to emulator/store), shared by the store's map
// and its watch history. It holds the version as a tree (ObjectPtr) while anyone may read it; once
// no one but the slot holds that tree and it has not been written or decoded for a sweep period,
// the SlotSweeper packs it: the slot keeps the version as zstd-compressed MessagePack (about a
// third of its JSON text, a fifteenth of the tree's memory) and drops the tree. The next read
// decodes it again (Tree()), and the packed bytes are kept, so packing it again costs nothing.
// This is etcd's and kube-apiserver's arrangement in small: objects at rest as bytes, decoded
// objects only where a reader holds them (the informers' consumers, the actors' caches, a watch's
// queue).
// A packed version decodes to an equal tree: the same keys, strings and values (`==` holds);
// non-negative integers come back as unsigned, as any parsed JSON does.
// Thread safety: none; the Store's mutex guards every slot and the sweeper.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "emulator/store/store.h"

namespace pjemu::store {

class SlotSweeper;

class Slot : public std::enable_shared_from_this<Slot> {
 public:
  // `sweeper` (nullable: never packed) must outlive the slot.
  Slot(ObjectPtr tree, SlotSweeper* sweeper) : tree_(std::move(tree)), sweeper_(sweeper) {}

  // The version as a tree, decoded from its packed bytes when it was packed. A copy: the tree
  // stays while the caller holds it, whatever a sweep does meanwhile.
  ObjectPtr Tree() const;
  // The tree as it is (null while packed), for the store's own bookkeeping: not a read.
  const ObjectPtr& Unpacked() const { return tree_; }
  // Packs the version when the slot is the tree's only holder; true when the tree is gone.
  bool PackIfUnheld();
  bool packed() const { return !tree_; }
  std::size_t packed_bytes() const { return packed_.size(); }

 private:
  mutable ObjectPtr tree_;      // null while packed
  std::string packed_;          // "" until first packed
  SlotSweeper* const sweeper_;
};
using SlotPtr = std::shared_ptr<Slot>;

// Decides when slots are packed: every slot written or decoded is `Fresh`; each sweep packs the
// slots that were fresh before the previous sweep and are held by no reader, and keeps looking
// at the held ones in later sweeps. A sweep runs once a quarter as many slots turned fresh as the
// last one kept (and at least `period`), so its cost is a constant per write. MaybeSweep runs only
// where the store holds no bare reference into a slot's tree (after a request's changes are
// recorded).
class SlotSweeper {
 public:
  explicit SlotSweeper(std::size_t period) : period_(period) {}
  SlotSweeper(const SlotSweeper&) = delete;
  SlotSweeper& operator=(const SlotSweeper&) = delete;

  SlotPtr Make(ObjectPtr tree);  // a new fresh slot (never packed when period is 0)
  void Fresh(const SlotPtr& slot);
  void MaybeSweep();
  std::size_t packed_total() const { return packed_total_; }  // packings so far

 private:
  const std::size_t period_;
  std::vector<std::weak_ptr<Slot>> fresh_, aging_;
  std::size_t packed_total_ = 0;
};

}  // namespace pjemu::store
