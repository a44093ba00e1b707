// Memo: a bounded memo of a pure function, one per thread that declares it `thread_local`: the
// results it computed last, by key, emptied when full (a miss only costs the computation again).
// For functions whose arguments repeat within a short stretch of work: a field set's stored text
// (every pod of a replica type carries the same), an image name, a Service's host name.
// Thread safety: none; declare each instance thread_local (or guard it).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>

namespace pjemu {

template <typename Value, std::size_t kMax = 256>
class Memo {
 public:
  // The value for `key`: remembered, else `compute()` (remembered from then on).
  template <typename Compute>
  Value Get(const std::string& key, Compute&& compute) {
    if (auto it = values_.find(key); it != values_.end()) return it->second;
    if (values_.size() >= kMax) values_.clear();
    return values_.emplace(key, std::forward<Compute>(compute)()).first->second;
  }

 private:
  std::unordered_map<std::string, Value> values_;
};

}  // namespace pjemu
