// ObjectList: objects as shared immutable snapshots, iterated and indexed as `const Json&`. What
// a controller reads each pass (its children) without copying them: a list read in process
// holds the store's own snapshots (client::Client::ListObjects), one read over HTTP holds fresh
// ones. Plain values convert to it (each copied once into a snapshot), so a test may pass
// `std::vector<Json>` or `{a, b}` where an ObjectList is taken.
// Thread safety: a value; the objects it points to are never changed.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

class ObjectList {
 public:
  using Ptr = std::shared_ptr<const Json>;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Json;
    using difference_type = std::ptrdiff_t;
    using pointer = const Json*;
    using reference = const Json&;

    const_iterator() = default;
    explicit const_iterator(std::vector<Ptr>::const_iterator it) : it_(it) {}
    const Json& operator*() const { return **it_; }
    const Json* operator->() const { return it_->get(); }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(it_++); }
    bool operator==(const const_iterator& other) const { return it_ == other.it_; }
    bool operator!=(const const_iterator& other) const { return it_ != other.it_; }

   private:
    std::vector<Ptr>::const_iterator it_;
  };

  ObjectList() = default;
  explicit ObjectList(std::vector<Ptr> items) : items_(std::move(items)) {}
  ObjectList(const std::vector<Json>& objects) {  // NOLINT: implicit, copies each object
    items_.reserve(objects.size());
    for (const Json& o : objects) items_.push_back(std::make_shared<const Json>(o));
  }
  ObjectList(std::initializer_list<Json> objects) : ObjectList(std::vector<Json>(objects)) {}

  void push_back(Ptr object) { items_.push_back(std::move(object)); }
  void push_back(Json object) { items_.push_back(std::make_shared<const Json>(std::move(object))); }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Json& operator[](std::size_t i) const { return *items_[i]; }
  const Json& front() const { return *items_.front(); }
  // The snapshot itself (to share it with another list).
  const Ptr& ptr(std::size_t i) const { return items_[i]; }
  const_iterator begin() const { return const_iterator(items_.begin()); }
  const_iterator end() const { return const_iterator(items_.end()); }

 private:
  std::vector<Ptr> items_;
};

}  // namespace pjemu::api
