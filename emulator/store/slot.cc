#include "emulator/store/slot.h"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace pjemu::store {
namespace {

// MessagePack (nlohmann's encoder: twice as fast to write and a quarter faster to read as JSON
// text, no UTF-8 check to fail), then zstd at its first fast level: a version is packed in about
// 3 us (an Event) to 9 us (a Pod) to a sixth of its JSON text.
constexpr int kLevel = -1;

struct Contexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  ~Contexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

// One pair per thread: reused contexts save zstd's setup on every small object.
Contexts& ThreadContexts() {
  thread_local Contexts contexts;
  return contexts;
}

[[noreturn]] void Corrupt(const char* what) {
  std::fprintf(stderr, "pjemu store: a packed object cannot be decoded (%s)\n", what);
  std::abort();
}

}  // namespace

ObjectPtr Slot::Tree() const {
  if (tree_) return tree_;
  unsigned long long size = ZSTD_getFrameContentSize(packed_.data(), packed_.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) Corrupt("frame");
  std::string bytes(size, '\0');
  std::size_t got = ZSTD_decompressDCtx(ThreadContexts().decompress, bytes.data(), bytes.size(),
                                        packed_.data(), packed_.size());
  if (ZSTD_isError(got) || got != size) Corrupt(ZSTD_getErrorName(got));
  Json tree = Json::from_msgpack(bytes, true, false);
  if (tree.is_discarded()) Corrupt("MessagePack");
  tree_ = std::make_shared<const Json>(std::move(tree));
  if (sweeper_) sweeper_->Fresh(std::const_pointer_cast<Slot>(shared_from_this()));
  return tree_;
}

bool Slot::PackIfUnheld() {
  if (!tree_) return true;
  if (tree_.use_count() != 1) return false;
  if (packed_.empty()) {
    std::vector<std::uint8_t> bytes = Json::to_msgpack(*tree_);
    std::string packed(ZSTD_compressBound(bytes.size()), '\0');
    std::size_t n = ZSTD_compressCCtx(ThreadContexts().compress, packed.data(), packed.size(),
                                      bytes.data(), bytes.size(), kLevel);
    if (ZSTD_isError(n)) return false;
    packed.resize(n);
    packed.shrink_to_fit();
    packed_ = std::move(packed);
  }
  tree_.reset();
  return true;
}

SlotPtr SlotSweeper::Make(ObjectPtr tree) {
  auto slot = std::make_shared<Slot>(std::move(tree), period_ > 0 ? this : nullptr);
  if (period_ > 0) Fresh(slot);
  return slot;
}

void SlotSweeper::Fresh(const SlotPtr& slot) {
  if (period_ == 0) return;
  fresh_.push_back(slot);
}

void SlotSweeper::MaybeSweep() {
  if (period_ == 0 || fresh_.size() < std::max(period_, aging_.size() / 4)) return;
  std::vector<std::weak_ptr<Slot>> held;
  for (auto& weak : aging_) {
    SlotPtr slot = weak.lock();
    if (!slot || slot->packed()) continue;  // gone, or packed (a read makes it fresh again)
    if (slot->PackIfUnheld()) {
      ++packed_total_;
    } else {
      held.push_back(std::move(weak));
    }
  }
  held.insert(held.end(), fresh_.begin(), fresh_.end());
  aging_ = std::move(held);
  fresh_.clear();
}

}  // namespace pjemu::store
