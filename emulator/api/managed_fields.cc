#include "emulator/api/managed_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "emulator/api/field_schema.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/structured_merge.h"
#include "emulator/common/memo.h"

namespace pjemu::api {
namespace {

struct Entry {
  std::string manager, operation, api_version, subresource;
  std::string time;  // "" when the entry has none
  FieldSet set;

  bool Is(const std::string& m, const char* op, const std::string& sub) const {
    return manager == m && operation == op && subresource == sub;
  }
};

const char* SubresourceName(Subresource sub) {
  return sub == Subresource::kStatus ? "status" : sub == Subresource::kScale ? "scale" : "";
}

const Json* Find(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json* ManagedOf(const Json* object) {
  if (!object) return nullptr;
  const Json* meta = Find(*object, "metadata");
  return meta ? Find(*meta, "managedFields") : nullptr;
}

// An entry's fieldsV1 as a tree, whichever form it is stored in (CompactManagedFields).
Json FieldsV1Of(const Json& v1) {
  if (!v1.is_string()) return v1;
  Json tree = Json::parse(v1.get_ref<const std::string&>(), nullptr, /*allow_exceptions=*/false);
  return tree.is_discarded() ? Json::object() : tree;
}

// The field set of an entry's fieldsV1, either form. Stored texts repeat (every pod of a replica
// type carries the same kubelet and controller entries), so each thread keeps the sets it parsed
// last: a bounded memo of a pure function, emptied when full.
std::shared_ptr<const FieldSet> SetOf(const Json& fields_v1) {
  if (!fields_v1.is_string()) return std::make_shared<const FieldSet>(FromFieldsV1(fields_v1));
  thread_local Memo<std::shared_ptr<const FieldSet>> memo;
  const std::string& text = fields_v1.get_ref<const std::string&>();
  return memo.Get(text, [&] { return std::make_shared<const FieldSet>(FromFieldsV1Text(text)); });
}

// Applies `f` to each entry's fieldsV1 in the list of entries `managed`.
template <typename F>
void ForEachEntryFieldsV1(Json& managed, F&& f) {
  if (!managed.is_array()) return;
  for (Json& e : managed) {
    if (!e.is_object()) continue;
    if (auto v1 = e.find("fieldsV1"); v1 != e.end()) f(*v1);
  }
}

// Applies `f` to each entry's fieldsV1 in the object's managedFields (or each list item's).
template <typename F>
void ForEachFieldsV1(Json& object, F&& f) {
  if (!object.is_object()) return;
  if (auto items = object.find("items"); items != object.end() && items->is_array()) {
    for (Json& item : *items) ForEachFieldsV1(item, f);
  }
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return;
  auto managed = meta->find("managedFields");
  if (managed != meta->end()) ForEachEntryFieldsV1(*managed, f);
}

// A fieldsV1 in the stored form: a tree becomes its compact text.
void CompactFieldsV1(Json& v1) {
  if (v1.is_object()) v1 = v1.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// One entry; false when it is not a FieldsV1 entry of operation Apply or Update. Its fields
// are decoded only when `fields` is set.
bool DecodeEntry(const Json& e, Entry* entry, bool fields) {
  if (!e.is_object()) return false;
  auto str = [&](const char* k) {
    const Json* v = Find(e, k);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  };
  *entry = Entry{str("manager"),     str("operation"), str("apiVersion"),
                 str("subresource"), str("time"),      {}};
  if ((entry->operation != "Apply" && entry->operation != "Update") ||
      str("fieldsType") != "FieldsV1") {
    return false;
  }
  if (fields) {
    const Json* v1 = Find(e, "fieldsV1");
    entry->set = v1 ? *SetOf(*v1) : FieldSet{};
  }
  return true;
}

// Decodes managedFields; false when they are not a list of FieldsV1 entries.
bool Decode(const Json* managed, std::vector<Entry>* out) {
  out->clear();
  if (!managed || managed->is_null()) return true;
  if (!managed->is_array()) return false;
  for (const auto& e : *managed) {
    Entry entry;
    if (!DecodeEntry(e, &entry, true)) return false;
    out->push_back(std::move(entry));
  }
  return true;
}

// Whether an entry's stored fieldsV1 may touch `set`, told from its text without parsing it: a
// set it touches holds one of `set`'s top-level elements ("f:status") as a key, so its text
// holds that quoted string (whatever the spacing; a match elsewhere only costs the parse).
// Unsure (a tree, or an element JSON would escape) answers true.
bool MayTouch(const Json& stored_fields, const FieldSet& set) {
  if (!stored_fields.is_string()) return true;
  const std::string& text = stored_fields.get_ref<const std::string&>();
  for (const auto& [element, child] : set.children) {
    bool plain = std::all_of(element.begin(), element.end(), [](char ch) {
      return ch != '"' && ch != '\\' && static_cast<unsigned char>(ch) >= 0x20;
    });
    if (!plain) return true;
    // A skip table: a text's quotes and "f:" prefixes are too common for a scan from each.
    const std::string quoted = "\"" + element + "\"";
    const std::boyer_moore_horspool_searcher searcher(quoted.begin(), quoted.end());
    if (std::search(text.begin(), text.end(), searcher) != text.end()) return true;
  }
  return false;
}

// An entry with the given fieldsV1 value (a tree, or the stored text).
Json EntryJson(const Entry& e, Json fields_v1) {
  // Member by member (an initializer list builds each pair first), in key order (AppendMember).
  Json j = Json::object();
  AppendMember(j, "apiVersion", e.api_version);
  AppendMember(j, "fieldsType", "FieldsV1");
  AppendMember(j, "fieldsV1", std::move(fields_v1));
  if (!e.manager.empty()) AppendMember(j, "manager", e.manager);
  AppendMember(j, "operation", e.operation);
  if (!e.subresource.empty()) AppendMember(j, "subresource", e.subresource);
  if (!e.time.empty()) AppendMember(j, "time", e.time);
  return j;
}

Json EncodeEntry(const Entry& e) { return EntryJson(e, ToFieldsV1(e.set)); }

// The entry with the field set `set`, its fieldsV1 in the form the write asks for.
Json EncodeEntry(const Entry& e, const FieldSet& set, const ManagedWrite& write) {
  return EntryJson(e, write.stored_form ? Json(ToFieldsV1Text(set)) : ToFieldsV1(set));
}

// The writer's own entry after the write, merged in its stored text (MergeFieldsV1Text), into
// `out` (nothing when it is left with no fields): false when that text is not in the form this
// file writes, or the write asks for trees, or a client rewrote the entries (then the entry's set
// is parsed and encoded again).
bool MergeOwn(const Json& stored, const Json* stored_fields, const Entry& entry,
              const FieldSet& removed, const FieldSet& changed, const ManagedWrite& write,
              bool rewritten, Json& out) {
  if (rewritten || !write.stored_form || !stored_fields || !stored_fields->is_string()) {
    return false;
  }
  const std::string& text = stored_fields->get_ref<const std::string&>();
  std::optional<std::string> merged = MergeFieldsV1Text(text, removed, changed);
  if (!merged) return false;
  if (*merged == "{}") return true;
  if (*merged == text) {  // its fields as they were: the stored entry, its time moved
    Json same = stored;
    if (!entry.time.empty()) same["time"] = entry.time;
    out.push_back(std::move(same));
  } else {
    out.push_back(EntryJson(entry, Json(std::move(*merged))));
  }
  return true;
}

// kube-apiserver's order of encoded entries: operation, time, manager, apiVersion, subresource.
void SortEncoded(Json& entries) {
  static const std::string kNone;
  auto str = [](const Json& e, const char* k) -> const std::string& {
    const Json* v = Find(e, k);
    return v && v->is_string() ? v->get_ref<const std::string&>() : kNone;
  };
  // Member by member, each looked up only when those before it are equal (mostly the time
  // decides).
  auto less = [&](const Json& a, const Json& b) {
    for (const char* member : {"operation", "time", "manager", "apiVersion", "subresource"}) {
      if (int c = str(a, member).compare(str(b, member)); c != 0) return c < 0;
    }
    return false;
  };
  // Mostly in order already (a write moves its own entry's time, and it was the latest): a
  // check costs less than the sort's buffer and moves.
  if (std::is_sorted(entries.begin(), entries.end(), less)) return;
  std::stable_sort(entries.begin(), entries.end(), less);
}

// kube-apiserver's order: operation, time, manager, apiVersion, subresource.
Json Encode(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.operation, a.time, a.manager, a.api_version, a.subresource) <
           std::tie(b.operation, b.time, b.manager, b.api_version, b.subresource);
  });
  Json out = Json::array();
  for (const auto& e : entries) {
    if (!e.set.Empty()) out.push_back(EncodeEntry(e));
  }
  return out;
}

void Store(Json& object, Json managed) {
  Json& meta = object["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (managed.empty()) {
    meta.erase("managedFields");
  } else {
    meta["managedFields"] = std::move(managed);
  }
}

// What no manager owns: apiVersion, kind, metadata's identity and bookkeeping (kube-apiserver's
// stripMeta), and the part of the object the write may not touch (its reset fields): .status
// for a main-resource write of a type with a status; all but .status for a /status write.
FieldSet SkipSet(const ResourceType& type, Subresource sub, const Json& a, const Json& b) {
  FieldSet skip;
  auto add = [&](const std::string& key) { skip.children["f:" + key].member = true; };
  if (sub == Subresource::kStatus) {
    for (const Json* o : {&a, &b}) {
      if (!o->is_object()) continue;
      for (const auto& [key, v] : o->items()) {
        if (key != "status") add(key);
      }
    }
    return skip;
  }
  add("apiVersion");
  add("kind");
  if (type.has_status) add("status");
  FieldSet& meta = skip.children["f:metadata"];
  for (const char* f : {"name", "namespace", "uid", "resourceVersion", "generation",
                        "creationTimestamp", "selfLink", "managedFields", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generateName"}) {
    meta.children[std::string("f:") + f].member = true;
  }
  return skip;
}

// SkipSet, remembered: it depends only on the type, the subresource and (for /status) the
// objects' top-level keys, which every write of a kind repeats.
std::shared_ptr<const FieldSet> SharedSkipSet(const ResourceType& type, Subresource sub,
                                              const Json& a, const Json& b) {
  std::string key = type.PluralGroup();
  key += sub == Subresource::kStatus ? "\n/status" : sub == Subresource::kScale ? "\n/scale" : "\n";
  if (sub == Subresource::kStatus) {
    for (const Json* o : {&a, &b}) {
      key += '\n';
      if (!o->is_object()) continue;
      for (const auto& [k, v] : o->items()) {  // each length-prefixed: any key, no collision
        char length[24];
        key.append(length, std::to_chars(length, length + sizeof length, k.size()).ptr);
        key += ':';
        key += k;
      }
    }
  }
  thread_local Memo<std::shared_ptr<const FieldSet>> memo;
  return memo.Get(key, [&] { return std::make_shared<const FieldSet>(SkipSet(type, sub, a, b)); });
}

// `.metadata` itself is in no set (stripMeta), though its fields are.
void DropMetadataNode(FieldSet& set) {
  auto it = set.children.find("f:metadata");
  if (it != set.children.end()) {
    it->second.member = false;
    if (it->second.Empty()) set.children.erase(it);
  }
}
FieldSet WithoutMetadataNode(FieldSet set) {
  DropMetadataNode(set);
  return set;
}

Comparison CompareWrite(const TypeSchema& ts, const Json& before, const Json& after,
                        const FieldSet& skip) {
  Comparison c = Compare(&before, &after, ts.root, &skip);
  for (FieldSet* s : {&c.added, &c.modified, &c.removed}) DropMetadataNode(*s);
  return c;
}

// A manager's name as kube-apiserver's conflict messages print it.
std::string PrintManager(const Entry& e) {
  std::string out = Json(e.manager).dump();
  if (!e.subresource.empty()) out += " with subresource " + Json(e.subresource).dump();
  if (e.operation == "Update") out += " using " + e.api_version;
  return out;
}

Status ConflictError(std::vector<std::pair<const Entry*, FieldSet>> conflicts) {
  std::sort(conflicts.begin(), conflicts.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->manager, a.first->operation, a.first->subresource) <
           std::tie(b.first->manager, b.first->operation, b.first->subresource);
  });
  Json causes = Json::array();
  std::vector<std::pair<std::string, std::vector<std::string>>> by_manager;
  std::size_t count = 0;
  for (const auto& [entry, set] : conflicts) {
    by_manager.push_back({PrintManager(*entry), PathStrings(set)});
    for (const auto& path : by_manager.back().second) {
      causes.push_back({{"reason", "FieldManagerConflict"},
                        {"message", "conflict with " + by_manager.back().first},
                        {"field", path}});
      ++count;
    }
  }
  std::string message;
  if (count == 1) {
    message = "Apply failed with 1 conflict: conflict with " + by_manager[0].first + ": " +
              by_manager[0].second[0];
  } else {
    message = "Apply failed with " + std::to_string(count) + " conflicts: ";
    bool first = true;
    for (const auto& [manager, paths] : by_manager) {
      message += (first ? "" : "\n") + std::string("conflicts with ") + manager + ":";
      first = false;
      for (const auto& p : paths) message += "\n- " + p;
    }
  }
  return Status(Code::kConflict, message, Json{{"causes", causes}});
}

std::string LastApplied(const Json* object) {
  if (!object) return "";
  const Json* meta = Find(*object, "metadata");
  const Json* annotations = meta ? Find(*meta, "annotations") : nullptr;
  const Json* value = annotations ? Find(*annotations, kLastAppliedAnnotation) : nullptr;
  return value && value->is_string() ? value->get<std::string>() : "";
}

// The fields client-side apply last set (its annotation) that still hold the value it set:
// kubectl's server-side apply may take them from kubectl-client-side-apply without force.
FieldSet LastAppliedFields(const TypeSchema& ts, const FieldSet& skip, const std::string& text,
                           const Json& live) {
  Json last = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!last.is_object()) return {};
  Comparison c = Compare(&last, &live, ts.root, &skip);
  return Difference(ToFieldSet(last, ts.root, &skip), Union(c.modified, c.removed));
}

Json WithoutManaged(const Json* object) {
  return object ? CopyWithoutManagedFields(*object) : Json::object();
}

// The object the applier's configuration makes of `live` (merged where the write may write).
Json MergeApplied(const ResourceType& type, const TypeSchema& ts, const Json& live,
                  const Json& config, Subresource sub) {
  if (sub == Subresource::kStatus) {
    Json merged = live;
    if (const Json* status = Find(config, "status")) {
      const Json* old = Find(live, "status");
      merged["status"] = old ? Merge(*old, *status, ts.root.Child("status")) : *status;
    }
    return merged;
  }
  Json merged = Merge(live, config, ts.root);
  if (type.has_status) {
    if (const Json* status = Find(live, "status")) {
      merged["status"] = *status;
    } else {
      merged.erase("status");
    }
  }
  return merged;
}

// Appends `text` after its length, so that no two sequences of texts append alike.
void AppendPrefixed(std::string_view text, std::string& out) {
  if (text.size() < 0xff) {
    out += static_cast<char>(text.size());
  } else {
    char length[24];
    out += '\xff';
    out.append(length, std::to_chars(length, length + sizeof length, text.size()).ptr);
    out += ':';
  }
  out += text;
}

bool AppendShape(const Json& v, const Json* zero, const FieldSchema& s, std::string& out);

// A list's part of a create's shape: each item's path element (it is in the list's set) and the
// item's shape; an atomic list is one leaf. Items that repeat an element make the list atomic
// for the walk, and the shape shows the repeat. False where the zero object has a value (the
// walk would compare against it) or an item has no element.
bool AppendListShape(const Json& list, const Json* zero, const FieldSchema& s, std::string& out) {
  if (zero && !zero->is_null()) return false;
  if (list.empty() || s.list == FieldSchema::ListType::kAtomic) {
    out += list.empty() ? "[]" : "[.]";
    return true;
  }
  std::vector<std::string> elements;
  elements.reserve(list.size());
  for (const Json& item : list) {
    auto element = ItemElement(item, s);
    if (!element.ok()) return false;
    elements.push_back(std::move(element).value());
  }
  out += '[';
  for (std::size_t i = 0; i < elements.size(); ++i) {
    AppendPrefixed(elements[i], out);
    if (!AppendShape(list[i], nullptr, s.Item(), out)) return false;
  }
  out += ']';
  return true;
}

// Appends the shape of `v` (under schema `s`) to `out`: its keys, nested, with null leaves told
// apart, its lists' items by their path elements, and the value of each leaf the zero object
// (`zero`, at the same place) has too, so that two values of one shape compare alike against
// that zero object. False when no shape decides the value's set (AppendListShape).
bool AppendShape(const Json& v, const Json* zero, const FieldSchema& s, std::string& out) {
  if (v.is_array()) return AppendListShape(v, zero, s, out);
  if (!v.is_object()) {
    if (zero && !zero->is_object()) {
      out += v.dump();
    } else {
      out += v.is_null() ? '~' : '.';
    }
    return true;
  }
  const Json::object_t* zero_members =
      zero && zero->is_object() ? &zero->get_ref<const Json::object_t&>() : nullptr;
  out += '{';
  for (const auto& [key, child] : v.get_ref<const Json::object_t&>()) {
    AppendPrefixed(key, out);
    const Json* zero_child = nullptr;
    if (zero_members) {
      auto it = zero_members->find(key);
      if (it != zero_members->end()) zero_child = &it->second;
    }
    // A leaf's shape needs no schema: only objects and lists look theirs up.
    const FieldSchema& child_schema = child.is_structured() ? s.Child(key) : s;
    if (!AppendShape(child, zero_child, child_schema, out)) return false;
  }
  out += '}';
  return true;
}

// A create's only owner reference: its uid and its path element (ItemElement).
struct SoleOwner {
  std::string uid;
  std::string element;
};

// The create's only owner reference when its uid is plain text (letters, digits, '-', '_', '.':
// it then stands in the stored text as it is, unescaped); nullopt otherwise.
std::optional<SoleOwner> SoleOwnerOf(const TypeSchema& ts, const Json& next) {
  const Json& refs = Field(Field(next, "metadata"), "ownerReferences");
  if (!refs.is_array() || refs.size() != 1) return std::nullopt;
  const Json& uid = Field(refs[0], "uid");
  if (!uid.is_string()) return std::nullopt;
  const std::string& text = uid.get_ref<const std::string&>();
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!plain) return std::nullopt;
  auto element = ItemElement(refs[0], ts.root.Child("metadata").Child("ownerReferences"));
  if (!element.ok()) return std::nullopt;
  return SoleOwner{text, std::move(element).value()};
}

// The memo's key for a plain create of `next`, in `shape`; false when it is no plain create or
// has no shape. Where the path element of a sole owner reference (SoleOwnerOf, then `owner`)
// occurs once in the shape, it is left out and its place named on the type's line instead
// (which no other shape has: a type's name has no tab), so that a job's children share their
// shapes with every other job's.
bool CreatedShape(const ResourceType& type, const TypeSchema& ts, const Json* live,
                  const Json& next, const ManagedWrite& write, std::string& shape,
                  std::optional<SoleOwner>& owner) {
  owner.reset();
  if (live || !write.stored_form || write.subresource != Subresource::kNone || ManagedOf(&next)) {
    return false;
  }
  shape.clear();
  shape += type.PluralGroup();
  const std::size_t type_line = shape.size();
  shape.push_back('\n');
  if (!AppendShape(next, &ts.zero, ts.root, shape)) return false;
  std::optional<SoleOwner> sole = SoleOwnerOf(ts, next);
  if (!sole) return true;
  std::string element;  // as AppendListShape writes it
  AppendPrefixed(sole->element, element);
  const std::size_t at = shape.find(element);
  if (at == std::string::npos || shape.find(element, at + 1) != std::string::npos) return true;
  shape.erase(at, element.size());
  shape.insert(type_line, "\t" + std::to_string(at));
  owner = std::move(sole);
  return true;
}

// A create's stored text, memoized by shape: the first create's, and where in it the uid of its
// sole owner reference stands (npos when its shape names no owner).
struct CreatedMemo {
  std::optional<std::string> text;
  std::size_t owner_at = std::string::npos;
  std::size_t owner_size = 0;

  // The text for a create of this shape whose owner is `owner`.
  std::string For(const std::optional<SoleOwner>& owner) const {
    if (owner_at == std::string::npos) return *text;
    std::string out = *text;
    out.replace(owner_at, owner_size, owner->uid);
    return out;
  }
};

// The memo entry for the text `text` that a create with the sole owner `owner` wrote: reusable
// by the creates of its shape when the uid stands once in it, inside the owner reference's path
// element.
CreatedMemo MemoOfCreated(std::optional<std::string> text, const std::optional<SoleOwner>& owner) {
  CreatedMemo memo{std::move(text)};
  if (!owner || !memo.text) return memo;
  // The element as the text holds it: a member name, quoted as the compact dump writes it.
  const std::size_t at = memo.text->find(Json(owner->element).dump());
  const std::size_t uid_at = memo.text->find(owner->uid);
  const bool once =
      at != std::string::npos && memo.text->find(owner->uid, uid_at + 1) == std::string::npos;
  if (!once) {
    memo.text.reset();  // the uid stands elsewhere too: each create computes its own
    return memo;
  }
  memo.owner_at = uid_at;
  memo.owner_size = owner->uid.size();
  return memo;
}

// The text a plain create wrote (one entry's fieldsV1, "" when no manager owns anything of it);
// nullopt when it wrote anything else, which no later create of its shape can reuse.
std::optional<std::string> CreatedText(const Json& next) {
  const Json* managed = ManagedOf(&next);
  if (!managed || managed->empty()) return std::string();
  if (managed->size() != 1) return std::nullopt;
  const Json* fields = Find((*managed)[0], "fieldsV1");
  if (!fields || !fields->is_string()) return std::nullopt;
  return fields->get<std::string>();
}

// What UpdateManagedFields writes for a create whose shape's text is `text`.
void StoreCreated(const ResourceType& type, Json& next, const ManagedWrite& write,
                  const std::string& text) {
  if (!text.empty()) {
    Store(next, Json::array({EntryJson(
                    {write.manager, "Update", type.ApiVersion(), "", write.now, {}}, Json(text))}));
  } else if (next.contains("metadata") && next["metadata"].is_object()) {
    next["metadata"].erase("managedFields");
  }
}

// The managedFields after a write from `before` (whose entries are `stored`, nullable) to `next`
// (with the entries the client sent, `sent`, nullable): nullopt when the write changed nothing
// they record (they stay `stored`), else the new entries (empty: none).
std::optional<Json> EntriesAfter(const ResourceType& type, const TypeSchema& ts, const Json& before,
                                 const Json* stored, const Json* sent, const Json& next,
                                 const ManagedWrite& write) {
  // Managed fields the client rewrote (non-empty, valid, different) are the base; else the live
  // object's (written here, so valid).
  std::vector<Entry> decoded;
  bool rewritten = write.subresource == Subresource::kNone && sent && sent->is_array() &&
                   !sent->empty() && (!stored || !SameManagedFields(*sent, *stored)) &&
                   Decode(sent, &decoded);
  const std::shared_ptr<const FieldSet> skip_held =
      SharedSkipSet(type, write.subresource, before, next);
  const FieldSet& skip = *skip_held;
  Comparison c = CompareWrite(ts, before, next, skip);
  if (c.Empty() && !rewritten) return std::nullopt;
  static const Json kNone = Json::array();
  const Json& base = rewritten ? *sent : stored && stored->is_array() ? *stored : kNone;
  // Only the writer's entry and those holding a field this write changed or removed are decoded
  // and rewritten; the others are kept as they are (the cost of the common write).
  const std::string sub = SubresourceName(write.subresource);
  // What the write set (its additions and modifications), and all it touched (the removals too).
  FieldSet changed = c.modified.Empty() ? std::move(c.added)
                     : c.added.Empty()  ? std::move(c.modified)
                                        : Union(c.added, c.modified);
  FieldSet touched_with_removed;
  if (!c.removed.Empty()) touched_with_removed = Union(changed, c.removed);
  const FieldSet& touched = c.removed.Empty() ? changed : touched_with_removed;
  Json out = Json::array();
  bool own_seen = false;
  for (const Json& e : base) {
    Entry entry;
    if (!DecodeEntry(e, &entry, false)) continue;
    bool own = entry.Is(write.manager, "Update", sub);
    const Json* stored_fields = Find(e, "fieldsV1");
    if (!own && (!stored_fields || !MayTouch(*stored_fields, touched))) {
      out.push_back(e);
      continue;
    }
    if (own) {
      own_seen = true;
      if (!changed.Empty()) entry.time = write.now;
      if (MergeOwn(e, stored_fields, entry, c.removed, changed, write, rewritten, out)) continue;
    }
    static const FieldSet kEmpty;
    std::shared_ptr<const FieldSet> held = stored_fields ? SetOf(*stored_fields) : nullptr;
    const FieldSet& set = held ? *held : kEmpty;
    if (!own && !Intersects(set, touched)) {
      out.push_back(e);
      continue;
    }
    FieldSet kept;
    if (own) {
      // The common write changes only fields its manager already owns.
      bool same = !Intersects(set, c.removed) && Covers(set, changed);
      if (same && !set.Empty()) out.push_back(EncodeEntry(entry, set, write));
      if (same) continue;
      kept = Union(Difference(set, c.removed), changed);
    } else {
      kept = Difference(Difference(set, changed), c.removed);
    }
    if (!kept.Empty()) out.push_back(EncodeEntry(entry, kept, write));
  }
  if (!own_seen && !changed.Empty()) {
    out.push_back(EncodeEntry({write.manager, "Update", type.ApiVersion(), sub, write.now, {}},
                              changed, write));
  }
  SortEncoded(out);
  return out;
}

// UpdateManagedFields without the memo of creates.
void UpdateEntries(const ResourceType& type, const TypeSchema& ts, const Json* live, Json& next,
                   const ManagedWrite& write) {
  const Json* stored = ManagedOf(live);
  std::optional<Json> out =
      EntriesAfter(type, ts, live ? *live : ts.zero, stored, ManagedOf(&next), next, write);
  if (out) {
    Store(next, std::move(*out));
  } else if (stored) {
    next["metadata"]["managedFields"] = *stored;
  } else if (next.contains("metadata") && next["metadata"].is_object()) {
    next["metadata"].erase("managedFields");
  }
}

}  // namespace

Json CopyWithoutManagedFields(const Json& object, std::string_view skip) {
  if (!object.is_object()) return object;
  Json out = Json::object();  // in the object's own key order (AppendMember)
  for (const auto& [key, value] : object.items()) {
    if (!skip.empty() && key == skip) continue;  // an empty `skip` names none, not the key ""
    if (key != "metadata" || !value.is_object()) {
      AppendMember(out, key, value);
      continue;
    }
    Json meta = Json::object();
    for (const auto& [field, v] : value.items()) {
      if (field != "managedFields") AppendMember(meta, field, v);
    }
    AppendMember(out, key, std::move(meta));
  }
  return out;
}

void UpdateManagedFields(const ResourceType& type, const Json* live, Json& next,
                         const ManagedWrite& write) {
  const TypeSchema& ts = SchemaOf(type);
  thread_local std::string shape;  // its room kept from create to create
  std::optional<SoleOwner> owner;
  if (!CreatedShape(type, ts, live, next, write, shape, owner)) {
    return UpdateEntries(type, ts, live, next, write);
  }
  // A plain create's set depends only on its shape, and creates repeat their shapes (every Event
  // a component records, the pods and Services the controllers create for their jobs): the
  // texts by type and shape, a bounded memo of a pure function.
  thread_local Memo<CreatedMemo> created;
  bool computed = false;
  const CreatedMemo& memo = created.Get(shape, [&] {
    computed = true;
    UpdateEntries(type, ts, live, next, write);
    return MemoOfCreated(CreatedText(next), owner);
  });
  if (computed) return;
  if (memo.text) {
    StoreCreated(type, next, write, memo.For(owner));
  } else {
    UpdateEntries(type, ts, live, next, write);
  }
}

Json ManagedFieldsAfterUpdate(const ResourceType& type, const Json& live, const Json& live_managed,
                              const Json& next, const ManagedWrite& write) {
  const Json* stored = live_managed.is_null() ? nullptr : &live_managed;
  std::optional<Json> out = EntriesAfter(type, SchemaOf(type), live, stored, nullptr, next, write);
  if (out && out->empty()) return Json();
  Json managed = out ? std::move(*out) : live_managed;
  ForEachEntryFieldsV1(managed, CompactFieldsV1);  // those kept from `live_managed` may be trees
  return managed;
}

Result<Json> ApplyObject(const ResourceType& type, const Json* live, const Json& config,
                         const ManagedWrite& write, bool force) {
  if (const Json* sent = ManagedOf(&config); sent && !sent->is_null()) {
    return Status(Code::kBadRequest, "metadata.managedFields must be nil");
  }
  const TypeSchema& ts = SchemaOf(type);
  if (Status s = ValidateApplied(config, ts.root); !s.ok()) {
    return Status(Code::kInternal, "failed to create typed patch object (" + type.ApiVersion() +
                                       ", Kind=" + type.kind + "): " + s.message());
  }
  const Json live_object = WithoutManaged(live);
  const Json& before = live ? live_object : ts.zero;
  const std::string sub = SubresourceName(write.subresource);

  std::vector<Entry> entries;
  if (!Decode(ManagedOf(live), &entries)) entries.clear();
  Entry* applier = nullptr;
  for (auto& e : entries) {
    if (e.Is(write.manager, "Apply", sub)) applier = &e;
  }
  if (!applier) {
    entries.push_back({write.manager, "Apply", type.ApiVersion(), sub, "", {}});
    applier = &entries.back();
  }
  FieldSet config_skip = SkipSet(type, write.subresource, config, config);
  FieldSet last = applier->set;
  applier->set = WithoutMetadataNode(ToFieldSet(config, ts.root, &config_skip));
  applier->api_version = type.ApiVersion();

  Json merged = MergeApplied(type, ts, live_object, config, write.subresource);
  FieldSet owned;
  for (const auto& e : entries) owned = Union(owned, e.set);
  RemoveFields(merged, Difference(last, owned), owned, ts.root);

  FieldSet skip = SkipSet(type, write.subresource, before, merged);
  Comparison c = CompareWrite(ts, before, merged, skip);
  FieldSet changed = Union(c.added, c.modified);
  std::vector<std::pair<const Entry*, FieldSet>> conflicts;
  for (const auto& e : entries) {
    if (&e == applier) continue;
    FieldSet overlap = Intersection(e.set, changed);
    if (!overlap.Empty()) conflicts.emplace_back(&e, std::move(overlap));
  }
  if (!conflicts.empty() && !force) {
    std::string last_applied = write.manager == "kubectl" ? LastApplied(live) : "";
    FieldSet allowed =
        last_applied.empty() ? FieldSet{} : LastAppliedFields(ts, skip, last_applied, live_object);
    std::vector<std::pair<const Entry*, FieldSet>> left;
    for (auto& [e, set] : conflicts) {
      FieldSet rest = e->manager == "kubectl-client-side-apply" ? Difference(set, allowed) : set;
      if (!rest.Empty()) left.emplace_back(e, std::move(rest));
    }
    if (!left.empty()) return ConflictError(std::move(left));
  }
  for (auto& e : entries) {
    if (&e == applier) continue;
    e.set = Difference(Difference(e.set, changed), c.removed);
  }
  if (merged != live_object) applier->time = write.now;
  // As kube-apiserver's lastAppliedUpdater: when the result still has the annotation.
  if (write.manager == "kubectl" && !LastApplied(&merged).empty()) {
    Json annotation = config;
    Json& meta = annotation["metadata"];
    if (meta.contains("annotations") && meta["annotations"].is_object()) {
      meta["annotations"].erase(kLastAppliedAnnotation);
      if (meta["annotations"].empty()) meta.erase("annotations");
    }
    merged["metadata"]["annotations"][kLastAppliedAnnotation] = annotation.dump() + "\n";
  }
  Store(merged, Encode(std::move(entries)));
  return merged;
}

std::string ManagerFromUserAgent(std::string_view user_agent) {
  return std::string(user_agent.substr(0, user_agent.find('/')));
}

void CompactManagedFields(Json& object) { ForEachFieldsV1(object, CompactFieldsV1); }

void ExpandManagedFields(Json& object) {
  ForEachFieldsV1(object, [](Json& v1) {
    if (v1.is_string()) v1 = FieldsV1Of(v1);
  });
}

bool SameManagedFields(const Json& a, const Json& b) {
  if (a == b) return true;
  Json x = {{"metadata", {{"managedFields", a}}}}, y = {{"metadata", {{"managedFields", b}}}};
  ExpandManagedFields(x);
  ExpandManagedFields(y);
  return x == y;
}

}  // namespace pjemu::api
