// Field sets and the merge of server-side apply, as sigs.k8s.io/structured-merge-diff (v4/v6)
// defines them, over wire-form JSON and a type's FieldSchema (field_schema.h). Written from its
// documented semantics (the KEP "Apply", fieldpath/typed/merge packages); no code is shared.
//  - A field path is a list of elements: "f:<name>" (a field), "k:<key fields as JSON>" (an
//    associative list's item), "v:<JSON value>" (a set's item), "i:<n>" (a positional item).
//  - A FieldSet is a set of paths kept as a tree; its JSON form is fieldsV1 (".": the node itself).
//  - ToFieldSet: the fields an applied configuration sets (an apply's ownership).
//  - Compare: what a write added, modified and removed (an update's ownership).
//  - Merge: an applied configuration over the live object (scalars and atomic nodes replaced,
//    structs and maps field by field, associative lists and sets item by item).
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/field_schema.h"
#include "emulator/common/status.h"

namespace pjemu::api {

struct FieldSet {
  bool member = false;  // the path leading here is in the set
  std::map<std::string, FieldSet> children;

  bool Empty() const { return !member && children.empty(); }
  bool operator==(const FieldSet& other) const = default;
};

// fieldsV1 (`{"f:data":{"f:a":{}},...}`) and back. FromFieldsV1 ignores anything but objects.
Json ToFieldsV1(const FieldSet& set);
FieldSet FromFieldsV1(const Json& fields);
// ToFieldsV1(set).dump() (compact, invalid UTF-8 replaced), written without building the tree.
std::string ToFieldsV1Text(const FieldSet& set);
// FromFieldsV1 of the parsed `text` (an empty set when it is not JSON), read with nlohmann's SAX
// parser: the same set, without building the tree.
FieldSet FromFieldsV1Text(std::string_view text);
// ToFieldsV1Text(Union(Difference(FromFieldsV1Text(text), remove), add)), in one pass over the
// text without building its set: how a write changes the stored entry of its own manager (the
// parse and the encoding were most of an update's managed-fields cost). nullopt when `text` is
// not exactly as ToFieldsV1Text writes it (whitespace, a key out of order, an escape other than
// \" and \\, a byte outside printable ASCII, "." but first, a root "."), or when `add` has a
// key that sorts before "." where the node is a member; the caller then takes the long way.
std::optional<std::string> MergeFieldsV1Text(std::string_view text, const FieldSet& remove,
                                             const FieldSet& add);

FieldSet Union(const FieldSet& a, const FieldSet& b);
FieldSet Difference(const FieldSet& a, const FieldSet& b);
FieldSet Intersection(const FieldSet& a, const FieldSet& b);
// Whether every member path of `b` is a member of `a` (Union(a, b) == a, without building it).
bool Covers(const FieldSet& a, const FieldSet& b);
// Whether some member path of `b` is a member of `a` (Intersection(a, b) is not empty).
bool Intersects(const FieldSet& a, const FieldSet& b);
// The member paths in order, printed as structured-merge-diff prints them: `.data.a`,
// `.spec.containers[name="c"].image`, `.metadata.finalizers[="x"]`.
std::vector<std::string> PathStrings(const FieldSet& set);

// The path element of an item of the list `list` describes: "k:{...}" (keyed: the key fields,
// defaults filled in, as sorted compact JSON) or "v:<item>" (set). kInvalid when a keyed item is
// not an object or omits a key field without a default.
Result<std::string> ItemElement(const Json& item, const FieldSchema& list);
// An applied configuration's lists under `schema`: every keyed item names its keys, none twice
// (kInvalid naming the list's path, as structured-merge-diff's validation).
Status ValidateApplied(const Json& object, const FieldSchema& schema);

// Paths skipped by ToFieldSet and Compare: a member node skips that whole subtree.
// (The fields kube-apiserver strips from every manager's set: apiVersion, kind, metadata's
// name, namespace, uid, resourceVersion, ...; and the reset fields of the written part.)
FieldSet ToFieldSet(const Json& object, const FieldSchema& schema, const FieldSet* skip = nullptr);

struct Comparison {
  FieldSet added, modified, removed;
  bool Empty() const { return added.Empty() && modified.Empty() && removed.Empty(); }
};
// lhs -> rhs; either may be null (absent).
Comparison Compare(const Json* lhs, const Json* rhs, const FieldSchema& schema,
                   const FieldSet* skip = nullptr);

Json Merge(const Json& live, const Json& config, const FieldSchema& schema);

// Removes from `object` every member path of `remove` whose node `keep` holds neither at nor
// below it (a field someone else still owns keeps its parents).
void RemoveFields(Json& object, const FieldSet& remove, const FieldSet& keep,
                  const FieldSchema& schema);

}  // namespace pjemu::api
