// JsonObjectMap: the member table of every Json object (nlohmann::basic_json's ObjectType), a
// vector of (name, value) pairs kept sorted by JsonKeyLess. It iterates in the order std::map
// with that comparator did, so every text, hash and managed-fields entry written in member order
// is unchanged; it holds an object in one allocation instead of one node per member, so copying,
// decoding and freeing a tree costs a fraction of what the node tree cost.
// What it gives up: a member's address. Inserting or erasing a member moves the members after it
// (and all of them when the vector grows), so a reference, pointer or iterator into an object is
// valid only until that object next gains or loses a member; take it again afterwards. Lookups,
// and writes to an existing member's value, keep it valid. Under AddressSanitizer every insert
// and erase moves the whole table to a new allocation, so a stale reference the tests reach is
// reported as a use after free instead of reading a neighbour.
// Thread safety: a plain value, as std::map.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace pjemu {

// The order of a JSON object's member names: std::less<>'s order (bytes compared as unsigned
// char, then length), decided by the first byte where the names differ there, which is most
// comparisons in a lookup, without a call to memcmp. Transparent: found by string_view or char*.
struct JsonKeyLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    if (!a.empty() && !b.empty() && a.front() != b.front()) {
      return static_cast<unsigned char>(a.front()) < static_cast<unsigned char>(b.front());
    }
    return a < b;
  }
};

#if defined(__SANITIZE_ADDRESS__)
#define PJEMU_JSON_MAP_MOVES_ON_WRITE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PJEMU_JSON_MAP_MOVES_ON_WRITE 1
#endif
#endif

// Key is nlohmann's string type; the comparator and allocator nlohmann passes are left out.
template <class Key, class T, class IgnoredLess = void, class IgnoredAllocator = void>
class JsonObjectMap {
 public:
  using key_type = Key;
  using mapped_type = T;
  using value_type = std::pair<Key, T>;
  using key_compare = JsonKeyLess;
  using Container = std::vector<value_type>;
  using iterator = typename Container::iterator;
  using const_iterator = typename Container::const_iterator;
  using reverse_iterator = typename Container::reverse_iterator;
  using const_reverse_iterator = typename Container::const_reverse_iterator;
  using size_type = typename Container::size_type;
  using difference_type = typename Container::difference_type;
  using reference = value_type&;
  using const_reference = const value_type&;
  using allocator_type = typename Container::allocator_type;

  JsonObjectMap() = default;
  template <class It>
  JsonObjectMap(It first, It last) {
    insert(first, last);
  }
  JsonObjectMap(std::initializer_list<value_type> init) { insert(init.begin(), init.end()); }

  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  const_iterator cbegin() const noexcept { return items_.cbegin(); }
  const_iterator cend() const noexcept { return items_.cend(); }
  reverse_iterator rbegin() noexcept { return items_.rbegin(); }
  reverse_iterator rend() noexcept { return items_.rend(); }
  const_reverse_iterator rbegin() const noexcept { return items_.rbegin(); }
  const_reverse_iterator rend() const noexcept { return items_.rend(); }

  bool empty() const noexcept { return items_.empty(); }
  size_type size() const noexcept { return items_.size(); }
  size_type max_size() const noexcept { return items_.max_size(); }
  void clear() noexcept { items_.clear(); }
  void reserve(size_type n) { items_.reserve(n); }
  void swap(JsonObjectMap& other) noexcept { items_.swap(other.items_); }

  // The first member whose name is not less than `key`.
  template <class K>
  iterator lower_bound(const K& key) {
    return std::lower_bound(items_.begin(), items_.end(), std::string_view(key), Before());
  }
  template <class K>
  const_iterator lower_bound(const K& key) const {
    return std::lower_bound(items_.begin(), items_.end(), std::string_view(key), Before());
  }
  template <class K>
  iterator find(const K& key) {
    return items_.begin() + (std::as_const(*this).find(key) - cbegin());
  }
  // Short tables (most of an object's) are scanned, by length and first byte before the bytes
  // are compared (a call to memcmp): cheaper than a binary search's comparisons, whose branches
  // a lookup cannot predict, and most names of one length differ in their first byte.
  template <class K>
  const_iterator find(const K& key) const {
    const std::string_view name(key);
    if (items_.size() <= kScanned) {
      for (auto it = items_.begin(); it != items_.end(); ++it) {
        if (it->first.size() == name.size() &&
            (name.empty() ||
             (it->first.front() == name.front() &&
              std::char_traits<char>::compare(it->first.data(), name.data(), name.size()) == 0))) {
          return it;
        }
      }
      return items_.end();
    }
    auto it = lower_bound(name);
    return it != items_.end() && it->first == name ? it : items_.end();
  }
  template <class K>
  size_type count(const K& key) const {
    return find(key) == end() ? 0 : 1;
  }
  template <class K>
  bool contains(const K& key) const {
    return find(key) != end();
  }

  // As std::map's: a member already named `key` is kept and returned with false.
  template <class K, class... Args>
  std::pair<iterator, bool> emplace(K&& key, Args&&... args) {
    auto it = lower_bound(key);
    if (it != items_.end() && it->first == std::string_view(key)) return {it, false};
    return {Insert(it, std::forward<K>(key), std::forward<Args>(args)...), true};
  }
  // `hint`: where the member would go (end() when appending in order, as a decoder does); any
  // other place is searched.
  template <class K, class... Args>
  iterator emplace_hint(const_iterator hint, K&& key, Args&&... args) {
    const std::string_view name(key);
    const JsonKeyLess less;
    const bool after_previous = hint == cbegin() || less(std::prev(hint)->first, name);
    const bool before_hint = hint == cend() || less(name, hint->first);
    if (!after_previous || !before_hint) {
      return emplace(std::forward<K>(key), std::forward<Args>(args)...).first;
    }
    return Insert(items_.begin() + (hint - cbegin()), std::forward<K>(key),
                  std::forward<Args>(args)...);
  }
  std::pair<iterator, bool> insert(const value_type& value) {
    return emplace(value.first, value.second);
  }
  std::pair<iterator, bool> insert(value_type&& value) {
    return emplace(std::move(value.first), std::move(value.second));
  }
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first) emplace_hint(cend(), first->first, first->second);
  }

  template <class K>
  T& operator[](K&& key) {
    return emplace(std::forward<K>(key)).first->second;
  }
  template <class K>
  T& at(const K& key) {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("JsonObjectMap::at: no such member");
    return it->second;
  }
  template <class K>
  const T& at(const K& key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("JsonObjectMap::at: no such member");
    return it->second;
  }

  iterator erase(const_iterator pos) { return erase(pos, std::next(pos)); }
  iterator erase(iterator pos) {
    return erase(const_iterator(pos), const_iterator(std::next(pos)));
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = first - cbegin();
    items_.erase(first, last);
    Moved();
    return items_.begin() + at;
  }
  template <class K, class = std::enable_if_t<!std::is_convertible_v<K, const_iterator> &&
                                              !std::is_convertible_v<K, iterator>>>
  size_type erase(const K& key) {
    auto it = find(key);
    if (it == end()) return 0;
    erase(const_iterator(it));
    return 1;
  }

  friend bool operator==(const JsonObjectMap& a, const JsonObjectMap& b) {
    return a.items_ == b.items_;
  }
  friend bool operator!=(const JsonObjectMap& a, const JsonObjectMap& b) { return !(a == b); }
  friend bool operator<(const JsonObjectMap& a, const JsonObjectMap& b) {
    return a.items_ < b.items_;
  }

 private:
  static constexpr size_type kScanned = 12;
  // The room an object built member by member gets at its first (a decoded or copied one is
  // sized at once): most built objects (a condition, a container status, an Event) have 4 to
  // 8 members, which doubling from 1 reaches in 4 allocations.
  static constexpr size_type kFirstCapacity = 4;
  struct Before {
    bool operator()(const value_type& item, std::string_view key) const noexcept {
      return JsonKeyLess()(item.first, key);
    }
  };
  template <class K, class... Args>
  iterator Insert(iterator at, K&& key, Args&&... args) {
    const auto index = at - items_.begin();
    if (items_.capacity() == 0) items_.reserve(kFirstCapacity);
    items_.emplace(items_.begin() + index, std::piecewise_construct,
                   std::forward_as_tuple(std::forward<K>(key)),
                   std::forward_as_tuple(std::forward<Args>(args)...));
    Moved();
    return items_.begin() + index;
  }
  // Under AddressSanitizer: the table moves to a new allocation after every insert and erase.
  void Moved() {
#ifdef PJEMU_JSON_MAP_MOVES_ON_WRITE
    Container moved;
    moved.reserve(items_.size() + 1);
    for (value_type& item : items_) moved.emplace_back(std::move(item));
    items_.swap(moved);
#endif
  }

  Container items_;
};

}  // namespace pjemu
