// ObjectTexts: the compact JSON text of the store's immutable object snapshots, made once per
// snapshot (one resourceVersion of one object) however many watchers send it. A write fanned out
// to 1,000 HTTP watches is serialized once, not 1,000 times. Keyed by the snapshot's identity
// (the shared pointer the store handed out); the last `capacity` snapshots are kept, and held
// alive while kept, so an address is never reused by another object while its text is cached.
// Thread safety: every method is safe from any thread (one mutex; the text is made outside it).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "emulator/common/status.h"

namespace pjemu::apiserver {

class ObjectTexts {
 public:
  explicit ObjectTexts(std::size_t capacity = 2048) : capacity_(capacity) {}

  // `object`'s text as WatchLine writes it (dump(-1), invalid UTF-8 replaced). Never null.
  std::shared_ptr<const std::string> Text(const std::shared_ptr<const Json>& object);
  // Texts made so far (a miss each), for tests and benchmarks.
  std::size_t made() const;

 private:
  struct Entry {
    std::shared_ptr<const Json> object;
    std::shared_ptr<const std::string> text;
  };
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<Entry> order_;                                                // oldest first
  std::unordered_map<const Json*, std::shared_ptr<const std::string>> by_object_;
  std::size_t made_ = 0;
};

// The compact text of `object` (the one serialization WatchLine and ObjectTexts use).
std::string CompactText(const Json& object);

}  // namespace pjemu::apiserver
