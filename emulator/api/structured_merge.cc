#include "emulator/api/structured_merge.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <unordered_map>

namespace pjemu::api {
namespace {

using Shape = FieldSchema::Shape;
using ListType = FieldSchema::ListType;

// ---- sets -----------------------------------------------------------------------------------

void Prune(std::map<std::string, FieldSet>& children) {
  for (auto it = children.begin(); it != children.end();) {
    it = it->second.Empty() ? children.erase(it) : std::next(it);
  }
}

// "f:a" -> ".a"; "k:{"a":1,"b":"x"}" -> "[a=1,b="x"]"; "v:"x"" -> "[="x"]"; "i:3" -> "[3]".
std::string ElementString(const std::string& element) {
  std::string body = element.size() > 2 ? element.substr(2) : "";
  switch (element.empty() ? ' ' : element[0]) {
    case 'f':
      return "." + body;
    case 'k': {
      Json key = Json::parse(body, nullptr, /*allow_exceptions=*/false);
      if (!key.is_object()) return "[" + body + "]";
      std::string out = "[";
      for (const auto& [k, v] : key.items()) {
        out += (out.size() > 1 ? "," : "") + k + "=" + v.dump();
      }
      return out + "]";
    }
    case 'v':
      return "[=" + body + "]";
    case 'i':
      return "[" + body + "]";
    default:
      return element;
  }
}

void CollectPaths(const FieldSet& set, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [element, child] : set.children) {
    std::string path = prefix + ElementString(element);
    if (child.member) out.push_back(path);
    CollectPaths(child, path, out);
  }
}

// ---- walking objects under a schema ---------------------------------------------------------

const FieldSet* SkipChild(const FieldSet* skip, const std::string& element, bool* skipped) {
  *skipped = false;
  if (!skip) return nullptr;
  auto it = skip->children.find(element);
  if (it == skip->children.end()) return nullptr;
  *skipped = it->second.member;
  return &it->second;
}

bool Granular(const Json& v, const FieldSchema& s) {
  return (v.is_object() && s.shape != Shape::kAtomic) ||
         (v.is_array() && s.list != ListType::kAtomic);
}

// Whether two of `elements` are equal: pair by pair for the short lists objects mostly have
// (no allocation), sorted otherwise.
bool HasRepeat(const std::vector<std::string>& elements) {
  constexpr std::size_t kShort = 16;
  if (elements.size() <= kShort) {
    for (std::size_t i = 0; i < elements.size(); ++i) {
      for (std::size_t j = i + 1; j < elements.size(); ++j) {
        if (elements[i] == elements[j]) return true;
      }
    }
    return false;
  }
  std::vector<std::string_view> sorted(elements.begin(), elements.end());
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

// The path elements of a list's items in order; false when one has none or two share one (the
// list is then handled as atomic, which never fails a write of a live object).
bool Elements(const Json& list, const FieldSchema& s, std::vector<std::string>* out) {
  out->reserve(list.size());
  for (const auto& item : list) {
    auto pe = ItemElement(item, s);
    if (!pe.ok()) return false;
    out->push_back(std::move(pe).value());
  }
  return !HasRepeat(*out);
}

// Finds list elements by their path element: at a hinted index first (two versions of a list
// mostly keep their order), then by a scan, or through a hash index for long lists (a scan of
// each would be quadratic where items moved).
class ElementIndex {
 public:
  explicit ElementIndex(const std::vector<std::string>& elements) : elements_(elements) {
    constexpr std::size_t kScanned = 32;
    if (elements.size() <= kScanned) return;
    for (std::size_t i = 0; i < elements.size(); ++i) hashed_.emplace(elements[i], i);
  }
  // Where `element` is; npos when absent.
  std::size_t Find(const std::string& element, std::size_t hint) const {
    if (hint < elements_.size() && elements_[hint] == element) return hint;
    if (!hashed_.empty()) {
      auto it = hashed_.find(element);
      return it == hashed_.end() ? std::string::npos : it->second;
    }
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      if (elements_[i] == element) return i;
    }
    return std::string::npos;
  }

 private:
  const std::vector<std::string>& elements_;
  std::unordered_map<std::string_view, std::size_t> hashed_;
};

void ToSetAt(const Json& v, const FieldSchema& s, const FieldSet* skip, FieldSet& node) {
  if (v.is_object() && s.shape != Shape::kAtomic) {
    for (const auto& [key, child_value] : v.items()) {
      std::string element = "f:" + key;
      bool skipped;
      const FieldSet* child_skip = SkipChild(skip, element, &skipped);
      if (skipped) continue;
      FieldSet& child = node.children[element];
      ToSetAt(child_value, s.Child(key), child_skip, child);
      // A map's entries are members themselves; so are empty and null values.
      if (child_value.is_null() || (child_value.is_object() && child_value.empty()) ||
          s.shape == Shape::kMap) {
        child.member = true;
      }
    }
    Prune(node.children);
    return;
  }
  std::vector<std::string> elements;
  if (v.is_array() && s.list != ListType::kAtomic && Elements(v, s, &elements)) {
    for (std::size_t i = 0; i < elements.size(); ++i) {
      FieldSet& child = node.children[elements[i]];
      ToSetAt(v[i], s.Item(), nullptr, child);
      child.member = true;
    }
    return;
  }
  node.member = true;  // a scalar, an atomic node, or an empty object
}

struct Walk {
  // Where the walk stands in one of the three sets: the node of each prefix of `path`, the first
  // `valid` of them current (a set's nodes are std::map entries, which keep their addresses while
  // the walk inserts), so that an insertion looks up only the elements below them.
  struct Cursor {
    FieldSet* root;
    std::vector<FieldSet*> nodes;  // nodes[i]: the node at path[0..i]
    std::size_t valid = 0;
  };
  Comparison& c;
  // The path elements to where the walk stands: the first `depth` of `path`, whose strings stay
  // below it with their room, so that the next element at a depth is written without allocating.
  std::vector<std::string> path;
  std::size_t depth = 0;
  Cursor added{&c.added, {}}, modified{&c.modified, {}}, removed{&c.removed, {}};

  // Steps down to element `prefix` + `name`; returns it.
  const std::string& Push(std::string_view prefix, std::string_view name = {}) {
    if (depth == path.size()) path.emplace_back();
    std::string& element = path[depth++];
    element.assign(prefix).append(name);
    return element;
  }
  void Pop() {
    --depth;
    for (Cursor* k : {&added, &modified, &removed}) k->valid = std::min(k->valid, depth);
  }
  void Insert(Cursor& k) {
    if (depth == 0) return;
    if (k.nodes.size() < depth) k.nodes.resize(depth);
    FieldSet* node = k.valid == 0 ? k.root : k.nodes[k.valid - 1];
    for (std::size_t i = k.valid; i < depth; ++i) {
      node = k.nodes[i] = &node->children[path[i]];
    }
    k.valid = depth;
    node->member = true;
  }

  void Leaf(const Json* l, const Json* r) {
    if (!l) {
      Insert(added);
    } else if (!r) {
      Insert(removed);
    } else if (*l != *r) {
      Insert(modified);
    }
  }

  void Node(const Json* l, const Json* r, const FieldSchema& s, const FieldSet* skip) {
    // An unchanged subtree adds nothing (the common case). Where part of it is skipped (the
    // parts a write may not touch: all but .status for a status write), only the rest is
    // compared, below: the whole would compare what is skipped too.
    const bool skips = skip && !skip->children.empty();
    if (!skips && l && r && *l == *r) return;
    // A null on one side takes the other side's form (structured-merge-diff's wildcard): its
    // contents are all added or removed, the node itself is neither.
    bool l_null = l && l->is_null() && r && (r->is_object() || r->is_array());
    bool r_null = r && r->is_null() && l && (l->is_object() || l->is_array());
    if (l_null || r_null) {
      const Json* present = l_null ? r : l;
      if (present->empty() || !Granular(*present, s)) return Leaf(l, r);
      bool ok = present->is_object() ? Fields(l_null ? nullptr : l, l_null ? r : nullptr, s, skip)
                                     : Items(l_null ? nullptr : l, l_null ? r : nullptr, s);
      if (!ok) Leaf(l, r);
      return;
    }
    const Json* any = l ? l : r;
    bool both_kinds = !l || !r || l->type() == r->type();
    bool empty = (!l || l->empty() || l->is_null()) && (!r || r->empty() || r->is_null());
    if (!both_kinds || !Granular(*any, s) || empty) return Leaf(l, r);
    if (any->is_object()) {
      if (!Fields(l, r, s, skip)) return Leaf(l, r);
    } else if (!Items(l, r, s)) {
      return Leaf(l, r);
    }
    if (!l) {
      Insert(added);
    } else if (!r) {
      Insert(removed);
    }
  }

  bool Fields(const Json* l, const Json* r, const FieldSchema& s, const FieldSet* skip) {
    auto visit = [&](const std::string& key, const Json* lc, const Json* rc) {
      // An unchanged field with nothing skipped below adds nothing (Node's first test, made
      // before its path element is built).
      if (!skip && lc && rc && *lc == *rc) return;
      bool skipped;
      const FieldSet* child_skip = SkipChild(skip, Push("f:", key), &skipped);
      if (!skipped) Node(lc, rc, s.Child(key), child_skip);
      Pop();
    };
    if (l) {
      for (const auto& [key, lv] : l->items()) {
        const Json* rc = nullptr;
        if (r) {
          auto it = r->find(key);
          if (it != r->end()) rc = &*it;
        }
        visit(key, &lv, rc);
      }
    }
    if (r) {
      for (const auto& [key, rv] : r->items()) {
        if (!l || !l->contains(key)) visit(key, nullptr, &rv);
      }
    }
    return true;
  }

  bool Items(const Json* l, const Json* r, const FieldSchema& s) {
    std::vector<std::string> le, re;
    if ((l && !Elements(*l, s, &le)) || (r && !Elements(*r, s, &re))) return false;
    // Each of l's items with r's of the same element (a list has no repeats: Elements), found
    // at the same index first; then r's items l has not.
    const ElementIndex rindex(re);
    std::vector<bool> matched(re.size());
    for (std::size_t i = 0; i < le.size(); ++i) {
      const std::size_t j = rindex.Find(le[i], i);
      if (j != std::string::npos) matched[j] = true;
      Push(le[i]);
      Node(&(*l)[i], j == std::string::npos ? nullptr : &(*r)[j], s.Item(), nullptr);
      Pop();
    }
    for (std::size_t i = 0; i < re.size(); ++i) {
      if (matched[i]) continue;
      Push(re[i]);
      Node(nullptr, &(*r)[i], s.Item(), nullptr);
      Pop();
    }
    return true;
  }
};

void PruneTree(FieldSet& set) {
  for (auto& [e, child] : set.children) PruneTree(child);
  Prune(set.children);
}

Json MergeAt(const Json* l, const Json& r, const FieldSchema& s);

// Items of two associative lists or sets: shared items in the configuration's order, the live
// object's other items where they were, the configuration's new ones after the shared item
// before them (structured-merge-diff's list merge).
Json MergeItems(const Json& l, const Json& r, const FieldSchema& s) {
  std::vector<std::string> le, re;
  if (!Elements(l, s, &le) || !Elements(r, s, &re)) return r;
  std::unordered_map<std::string, std::size_t> lindex, rindex;
  for (std::size_t i = 0; i < le.size(); ++i) lindex[le[i]] = i;
  for (std::size_t i = 0; i < re.size(); ++i) rindex[re[i]] = i;
  std::vector<std::string> shared;
  for (const auto& pe : re) {
    if (lindex.count(pe)) shared.push_back(pe);
  }
  std::size_t next_shared = 0;
  std::set<std::string> taken;
  Json out = Json::array();
  auto take_rhs = [&](std::size_t ri) {
    const std::string& pe = re[ri];
    auto li = lindex.find(pe);
    out.push_back(MergeAt(li == lindex.end() ? nullptr : &l[li->second], r[ri], s.Item()));
    taken.insert(pe);
    if (next_shared < shared.size() && shared[next_shared] == pe) ++next_shared;
  };
  std::size_t li = 0, ri = 0;
  while (li < le.size() || ri < re.size()) {
    if (li < le.size() && ri < re.size()) {
      if (le[li] == re[ri]) {
        take_rhs(ri++);
        ++li;
        continue;
      }
      if (rindex.count(le[li]) && next_shared < shared.size() && shared[next_shared] != le[li]) {
        ++li;  // a shared item whose turn has not come
        continue;
      }
    }
    if (li < le.size()) {
      if (!rindex.count(le[li])) {
        out.push_back(l[li++]);
        continue;
      }
      if (taken.count(le[li])) {
        ++li;
        continue;
      }
    }
    if (ri < re.size()) take_rhs(ri++);
  }
  return out;
}

Json MergeAt(const Json* l, const Json& r, const FieldSchema& s) {
  if (!l || l->is_null()) return r;
  if (l->is_object() && r.is_object() && s.shape != Shape::kAtomic) {
    Json out = *l;
    for (const auto& [key, rv] : r.items()) {
      auto it = l->find(key);
      out[key] = MergeAt(it == l->end() ? nullptr : &*it, rv, s.Child(key));
    }
    return out;
  }
  if (l->is_array() && r.is_array() && s.list != ListType::kAtomic) return MergeItems(*l, r, s);
  return r;
}

bool KeepsSomething(const FieldSet* keep) { return keep && !keep->Empty(); }

void RemoveAt(Json& v, const FieldSet& remove, const FieldSet* keep, const FieldSchema& s) {
  auto keep_child = [&](const std::string& element) -> const FieldSet* {
    if (!keep) return nullptr;
    auto it = keep->children.find(element);
    return it == keep->children.end() ? nullptr : &it->second;
  };
  if (v.is_object() && s.shape != Shape::kAtomic) {
    for (const auto& [element, child] : remove.children) {
      if (element.rfind("f:", 0) != 0) continue;
      std::string key = element.substr(2);
      auto it = v.find(key);
      if (it == v.end()) continue;
      const FieldSet* kc = keep_child(element);
      if (child.member && !KeepsSomething(kc)) {
        v.erase(it);
      } else {
        RemoveAt(*it, child, kc, s.Child(key));
      }
    }
    return;
  }
  std::vector<std::string> elements;
  if (!v.is_array() || s.list == ListType::kAtomic || !Elements(v, s, &elements)) return;
  for (std::size_t i = elements.size(); i-- > 0;) {
    auto it = remove.children.find(elements[i]);
    if (it == remove.children.end()) continue;
    const FieldSet* kc = keep_child(elements[i]);
    if (it->second.member && !KeepsSomething(kc)) {
      v.erase(i);
    } else {
      RemoveAt(v[i], it->second, kc, s.Item());
    }
  }
}

Status ValidateAt(const Json& v, const FieldSchema& s, const std::string& path) {
  if (v.is_object() && s.shape != Shape::kAtomic) {
    for (const auto& [key, child] : v.items()) {
      RETURN_IF_ERROR(ValidateAt(child, s.Child(key), path + "." + key));
    }
    return Status::Ok();
  }
  if (!v.is_array() || s.list == ListType::kAtomic) return Status::Ok();
  std::set<std::string> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto pe = ItemElement(v[i], s);
    if (!pe.ok()) {
      return Status(Code::kInvalid, path + ": element " + std::to_string(i) + ": " +
                                        pe.status().message());
    }
    if (!seen.insert(*pe).second) {
      return Status(Code::kInvalid,
                    path + ": duplicate entries for key " + ElementString(*pe));
    }
    RETURN_IF_ERROR(ValidateAt(v[i], s.Item(), path + ElementString(*pe)));
  }
  return Status::Ok();
}

}  // namespace

Json ToFieldsV1(const FieldSet& set) {
  Json out = Json::object();
  if (set.member && !set.children.empty()) out["."] = Json::object();
  for (const auto& [element, child] : set.children) out[element] = ToFieldsV1(child);
  return out;
}

namespace {

// Whether nlohmann's dump writes `s` between quotes as it is: printable ASCII without quotes or
// backslashes.
bool Plain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    auto u = static_cast<unsigned char>(ch);
    return u >= 0x20 && u < 0x80 && ch != '"' && ch != '\\';
  });
}

// A path element as a JSON string, as nlohmann's dump writes it (the common plain case in place).
void AppendElement(const std::string& element, std::string& out) {
  if (!Plain(element)) {
    out += Json(element).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += element;
  out += '"';
}

// The tree's keys in its (byte) order: "." where it sorts among the children (before every
// "f:", "i:", "k:" and "v:"; after a stray key such as "\"x"), unless a child takes its place.
void AppendFieldsV1(const FieldSet& set, std::string& out) {
  out += '{';
  bool first = true, dot = set.member && !set.children.empty();
  auto next = [&] {
    if (!first) out += ',';
    first = false;
  };
  for (const auto& [element, child] : set.children) {
    if (dot && element >= ".") {
      dot = false;
      if (element != ".") {
        next();
        out += "\".\":{}";
      }
    }
    next();
    AppendElement(element, out);
    out += ':';
    AppendFieldsV1(child, out);
  }
  if (dot) {
    next();
    out += "\".\":{}";
  }
  out += '}';
}

// Builds FromFieldsV1's set from nlohmann's SAX events, so no tree is built: a frame per open
// object or array, the innermost last. Values inside arrays, and scalars, are skipped as
// FromFieldsV1 skips them; a key given twice keeps its last value, as the parser's tree does.
class FieldsV1Sax {
 public:
  using Number = Json::number_integer_t;
  using Unsigned = Json::number_unsigned_t;
  using Float = Json::number_float_t;

  explicit FieldsV1Sax(FieldSet* out) : out_(out) {}

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(Number) { return Value(); }
  bool number_unsigned(Unsigned) { return Value(); }
  bool number_float(Float, const std::string&) { return Value(); }
  bool string(std::string&) { return Value(); }
  bool binary(Json::binary_t&) { return Value(); }
  bool start_object(std::size_t) { return Open(/*skip=*/Skipping()); }
  bool key(std::string& key) {
    frames_.back().key = std::move(key);
    frames_.back().empty = false;
    return true;
  }
  bool end_object() {
    Frame done = std::move(frames_.back());
    frames_.pop_back();
    if (done.skip) return true;
    if (frames_.empty()) {
      *out_ = std::move(done.set);
      return true;
    }
    Frame& parent = frames_.back();
    if (parent.key == ".") {
      parent.set.member = true;
    } else {
      if (done.empty) done.set.member = true;
      if (done.set.Empty()) {
        parent.set.children.erase(parent.key);
      } else {
        parent.set.children[parent.key] = std::move(done.set);
      }
    }
    return true;
  }
  bool start_array(std::size_t) {
    Value();
    return Open(/*skip=*/true);
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  struct Frame {
    FieldSet set;
    std::string key;  // the key whose value comes next
    bool empty = true;
    bool skip = false;  // an array, or inside one: nothing in it counts
  };
  bool Skipping() const { return !frames_.empty() && frames_.back().skip; }
  bool Open(bool skip) {
    frames_.push_back(Frame{});
    frames_.back().skip = skip;
    return true;
  }
  // A value that is not an object, for the current key: "." still marks the node; any other
  // key's earlier object value is replaced by it, so it drops out.
  bool Value() {
    if (frames_.empty() || frames_.back().skip) return true;
    Frame& at = frames_.back();
    if (at.key == ".") {
      at.set.member = true;
    } else {
      at.set.children.erase(at.key);
    }
    return true;
  }

  FieldSet* out_;
  std::vector<Frame> frames_;
};

// Compares two keys as std::string compares them (bytes, unsigned), either as a text holds it
// (`escaped`: \" and \\ stand for " and \, the only escapes TextMerge reads) or as it is.
int CompareKeys(std::string_view a, bool a_escaped, std::string_view b, bool b_escaped) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a_escaped && a[i] == '\\') ++i;
    if (b_escaped && b[j] == '\\') ++j;
    auto x = static_cast<unsigned char>(a[i++]), y = static_cast<unsigned char>(b[j++]);
    if (x != y) return x < y ? -1 : 1;
  }
  if (i < a.size()) return 1;
  return j < b.size() ? -1 : 0;
}

// MergeFieldsV1Text's pass: a cursor over the text, writing the merged text as it reads.
class TextMerge {
 public:
  TextMerge(std::string_view text, std::string& out) : t_(text), out_(out) {}

  bool Root(const FieldSet& remove, const FieldSet& add) {
    bool kept = false;
    return Node(&remove, &add, /*root=*/true, &kept) && at_ == t_.size();
  }

 private:
  using Children = std::map<std::string, FieldSet>;

  bool Eat(char c) {
    if (at_ >= t_.size() || t_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool Next(char c) const { return at_ < t_.size() && t_[at_] == c; }
  bool Eat(std::string_view s) {
    if (t_.substr(at_, s.size()) != s) return false;
    at_ += s.size();
    return true;
  }
  // A key, as written (between its quotes); false when it is not as AppendElement writes keys.
  bool Key(std::string_view* raw) {
    if (!Eat('"')) return false;
    const std::size_t start = at_;
    for (; at_ < t_.size() && t_[at_] != '"'; ++at_) {
      auto u = static_cast<unsigned char>(t_[at_]);
      if (u < 0x20 || u >= 0x80) return false;
      if (t_[at_] == '\\') {
        if (++at_ >= t_.size() || (t_[at_] != '"' && t_[at_] != '\\')) return false;
      }
    }
    *raw = t_.substr(start, at_ - start);
    return Eat('"') && Eat(':');
  }
  void Comma(bool& first) {
    if (!first) out_ += ',';
    first = false;
  }
  // Writes a child of `add` alone, as Union's copy of it would be written.
  void WriteAdded(const std::string& element, const FieldSet& set, bool& first) {
    Comma(first);
    AppendElement(element, out_);
    out_ += ':';
    AppendFieldsV1(set, out_);
  }

  // The object at the cursor merged into out_; *kept: the merged node is not empty (else the
  // caller takes back what it wrote for it).
  bool Node(const FieldSet* remove, const FieldSet* add, bool root, bool* kept) {
    if (++depth_ > kMaxDepth || !Eat('{')) return false;  // deeper: the long way, no recursion
    bool text_member = !root && Next('}');
    if (Eat("\".\":{}")) {
      if (root || !Eat(',')) return false;  // "." alone is written {}
      text_member = true;
    }
    const bool member = (text_member && !(remove && remove->member)) || (add && add->member);
    static const Children kNone;
    const Children& removed = remove ? remove->children : kNone;
    const Children& added = add ? add->children : kNone;
    if (member && !added.empty() && added.begin()->first <= ".") return false;
    out_ += '{';
    const std::size_t body = out_.size();
    bool first = true;
    if (member) {
      Comma(first);
      out_ += "\".\":{}";
    }
    bool any = false;  // a child written
    auto r = removed.begin();
    auto a = added.begin();
    std::string_view previous = ".";
    bool previous_escaped = false;
    while (!Next('}')) {
      std::string_view raw;
      if (!Key(&raw) || CompareKeys(previous, previous_escaped, raw, true) >= 0) return false;
      previous = raw, previous_escaped = true;
      for (; a != added.end() && CompareKeys(raw, true, a->first, false) > 0; ++a) {
        WriteAdded(a->first, a->second, first);
        any = true;
      }
      while (r != removed.end() && CompareKeys(raw, true, r->first, false) > 0) ++r;
      const FieldSet* rc =
          r != removed.end() && CompareKeys(raw, true, r->first, false) == 0 ? &r->second : nullptr;
      const FieldSet* ac = nullptr;
      if (a != added.end() && CompareKeys(raw, true, a->first, false) == 0) ac = &(a++)->second;
      const std::size_t mark = out_.size();
      const bool was_first = first;
      Comma(first);
      out_ += '"';
      out_ += raw;
      out_ += "\":";
      bool child = false;
      if (!Node(rc, ac, /*root=*/false, &child)) return false;
      if (child) {
        any = true;
      } else {
        out_.resize(mark);
        first = was_first;
      }
      if (!Eat(',') && !Next('}')) return false;
      if (t_[at_ - 1] == ',' && Next('}')) return false;
    }
    Eat('}');
    for (; a != added.end(); ++a) {
      WriteAdded(a->first, a->second, first);
      any = true;
    }
    if (!any) out_.resize(body);  // a member with no children is written {}
    out_ += '}';
    // Union keeps a child of `add` even when it holds nothing (then written {}), as here.
    *kept = member || any || (!root && add);
    --depth_;
    return true;
  }

  static constexpr int kMaxDepth = 64;
  std::string_view t_;
  std::size_t at_ = 0;
  int depth_ = 0;
  std::string& out_;
};

}  // namespace

std::optional<std::string> MergeFieldsV1Text(std::string_view text, const FieldSet& remove,
                                             const FieldSet& add) {
  std::string out;
  out.reserve(text.size() + 64);
  if (!TextMerge(text, out).Root(remove, add)) return std::nullopt;
  return out;
}

FieldSet FromFieldsV1Text(std::string_view text) {
  FieldSet out;
  FieldsV1Sax sax(&out);
  if (!Json::sax_parse(text, &sax)) return FieldSet{};  // not JSON: as FromFieldsV1 of nothing
  return out;
}

std::string ToFieldsV1Text(const FieldSet& set) {
  std::string out;
  AppendFieldsV1(set, out);
  return out;
}

FieldSet FromFieldsV1(const Json& fields) {
  FieldSet set;
  if (!fields.is_object()) return set;
  for (const auto& [element, child] : fields.items()) {
    if (element == ".") {
      set.member = true;
      continue;
    }
    if (!child.is_object()) continue;
    FieldSet c = FromFieldsV1(child);
    if (child.empty()) c.member = true;
    if (!c.Empty()) set.children.emplace(element, std::move(c));
  }
  return set;
}

FieldSet Union(const FieldSet& a, const FieldSet& b) {
  FieldSet out = a;
  out.member = a.member || b.member;
  for (const auto& [element, child] : b.children) {
    auto it = out.children.find(element);
    if (it == out.children.end()) {
      out.children.emplace(element, child);
    } else {
      it->second = Union(it->second, child);
    }
  }
  return out;
}

FieldSet Difference(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  out.member = a.member && !b.member;
  for (const auto& [element, child] : a.children) {
    auto it = b.children.find(element);
    FieldSet c = it == b.children.end() ? child : Difference(child, it->second);
    if (!c.Empty()) out.children.emplace(element, std::move(c));
  }
  return out;
}

FieldSet Intersection(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  out.member = a.member && b.member;
  for (const auto& [element, child] : a.children) {
    auto it = b.children.find(element);
    if (it == b.children.end()) continue;
    FieldSet c = Intersection(child, it->second);
    if (!c.Empty()) out.children.emplace(element, std::move(c));
  }
  return out;
}

bool Covers(const FieldSet& a, const FieldSet& b) {
  if (b.member && !a.member) return false;
  for (const auto& [element, child] : b.children) {
    auto it = a.children.find(element);
    if (it == a.children.end() ? !child.Empty() : !Covers(it->second, child)) return false;
  }
  return true;
}

bool Intersects(const FieldSet& a, const FieldSet& b) {
  if (a.member && b.member) return true;
  for (const auto& [element, child] : b.children) {
    auto it = a.children.find(element);
    if (it != a.children.end() && Intersects(it->second, child)) return true;
  }
  return false;
}

std::vector<std::string> PathStrings(const FieldSet& set) {
  std::vector<std::string> out;
  CollectPaths(set, "", out);
  return out;
}

namespace {

// Appends v.dump(): plain strings (Plain), integers and booleans written directly, as the dump
// writes them; anything else by the dump itself.
void AppendDump(const Json& v, std::string& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (Plain(s)) {
      out += '"';
      out += s;
      out += '"';
      return;
    }
  } else if (v.is_number_integer() || v.is_boolean()) {
    char buf[24];
    if (v.is_boolean()) {
      out += v.get<bool>() ? "true" : "false";
    } else if (v.is_number_unsigned()) {
      out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<std::uint64_t>()).ptr);
    } else {
      out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<std::int64_t>()).ptr);
    }
    return;
  }
  out += v.dump();
}

}  // namespace

Result<std::string> ItemElement(const Json& item, const FieldSchema& list) {
  if (list.list == ListType::kSet) {
    std::string out = "v:";
    AppendDump(item, out);
    return out;
  }
  if (!item.is_object()) {
    return Status(Code::kInvalid, "associative list with keys has an element that is not a map");
  }
  // The key fields as the compact dump of an object of them would write them (sorted by name),
  // without building that object: every keyed list's item is named this way on every write.
  std::vector<std::pair<const std::string*, const Json*>> fields;
  fields.reserve(list.keys.size());
  for (const auto& k : list.keys) {
    auto it = item.find(k);
    if (it != item.end() && !it->is_null()) {
      fields.emplace_back(&k, &*it);
    } else if (auto d = list.key_defaults.find(k); d != list.key_defaults.end()) {
      fields.emplace_back(&k, &*d);
    } else {
      return Status(Code::kInvalid, "associative list with keys has an element that omits key "
                                    "field \"" + k + "\" (and doesn't have default value)");
    }
  }
  std::sort(fields.begin(), fields.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  fields.erase(std::unique(fields.begin(), fields.end(),
                           [](const auto& a, const auto& b) { return *a.first == *b.first; }),
               fields.end());
  std::string out = "k:{";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    AppendDump(Json(*fields[i].first), out);
    out += ':';
    AppendDump(*fields[i].second, out);
  }
  out += '}';
  return out;
}

Status ValidateApplied(const Json& object, const FieldSchema& schema) {
  return ValidateAt(object, schema, "");
}

FieldSet ToFieldSet(const Json& object, const FieldSchema& schema, const FieldSet* skip) {
  FieldSet set;
  ToSetAt(object, schema, skip, set);
  set.member = false;  // the root is not a field
  return set;
}

Comparison Compare(const Json* lhs, const Json* rhs, const FieldSchema& schema,
                   const FieldSet* skip) {
  Comparison c;
  if (!lhs && !rhs) return c;
  Walk walk{c, {}};
  walk.Node(lhs, rhs, schema, skip);
  for (FieldSet* s : {&c.added, &c.modified, &c.removed}) {
    s->member = false;
    PruneTree(*s);
  }
  return c;
}

Json Merge(const Json& live, const Json& config, const FieldSchema& schema) {
  return MergeAt(&live, config, schema);
}

void RemoveFields(Json& object, const FieldSet& remove, const FieldSet& keep,
                  const FieldSchema& schema) {
  RemoveAt(object, remove, &keep, schema);
}

}  // namespace pjemu::api
