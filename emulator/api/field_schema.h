// The merge schema of server-side apply: for each served type, which JSON objects are structs
// (declared fields), maps (any keys, each key its own field) or atomic, and which lists are
// atomic, sets, or associative lists ("maps") keyed by some of their items' fields. This is
// what kube-apiserver's structured-merge-diff reads from the OpenAPI schema, which the Go types
// generate from their `+listType`, `+listMapKey`, `+mapType`, `+structType` and
// `+patchMergeKey` markers; pjemu keeps it as short rule lines per type (field_rules.cc,
// pytorchjob_fields.cc), each taken from those markers.
//
// A type brings its rules through api::ResourceType::field_rules; a type without rules gets the
// defaults of an object without a schema: objects are granular structs, lists atomic.
//
// Rule lines: "<path> <directive>", where the path is dot-separated field names, "[]" for a
// list's items and "*" for any key of a map ("spec.containers[].ports"), and the directive one of
//   keys K1 K2=D   associative list keyed by K1 and K2 (D: the value assumed when an item
//                  omits K2, as the schema's default; kube-apiserver defaults it before merging)
//   set            list of scalars, each a field (v:<value>)
//   atomic         list or object replaced as a whole
//   map            object of arbitrary keys (labels, data, resource lists, replica specs)
// Thread safety: immutable after construction; SchemaOf builds every type's once, thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::api {

class FieldSchema {
 public:
  enum class Shape { kStruct, kMap, kAtomic };     // of a JSON object at this node
  enum class ListType { kAtomic, kSet, kKeyed };  // of a JSON array at this node

  Shape shape = Shape::kStruct;
  ListType list = ListType::kAtomic;
  std::vector<std::string> keys;       // kKeyed: the items' key fields
  Json key_defaults = Json::object();  // kKeyed: key field -> value when an item omits it

  // The schema of field `name` of an object here (a map's element for kMap; the default node,
  // a struct with atomic lists, for a field without rules).
  const FieldSchema& Child(std::string_view name) const;
  // The schema of a list's items.
  const FieldSchema& Item() const;
  // The node for `segment` ("name", "[]" or "*"), created when missing (rule compilation).
  FieldSchema& Ensure(const std::string& segment);

  static const FieldSchema& Default();

 private:
  std::map<std::string, std::unique_ptr<FieldSchema>, std::less<>> children_;
  std::unique_ptr<FieldSchema> element_;  // "*" and "[]"
};

// What a type's rules function returns: its rule lines and its zero object (the typed Go
// object's empty form, which kube-apiserver compares a created object against: e.g. a Pod's
// `spec` and `status` are never absent in Go, so creating one never adds `.spec` itself).
struct FieldRules {
  std::vector<std::string> rules;
  std::string zero = "{}";
};

struct TypeSchema {
  FieldSchema root;
  Json zero = Json::object();
};

// Compiles rule lines; an unparsable line is kInvalid naming it.
Result<TypeSchema> CompileFieldRules(const FieldRules& rules);
// The compiled schema of a served type (its field_rules, or the defaults).
const TypeSchema& SchemaOf(const ResourceType& type);

// Rule sets shared by several types, each taken from k8s.io/api's markers.
std::vector<std::string> ObjectMetaRules();
// PodSpec (and its Containers) under `prefix` ("spec", "spec.template.spec", ...).
std::vector<std::string> PodSpecRules(const std::string& prefix);
// The rules functions of the types in the resource table.
FieldRules PodFieldRules();
FieldRules ServiceFieldRules();
FieldRules ConfigDataFieldRules();  // ConfigMap and Secret
FieldRules NodeFieldRules();
FieldRules NamespaceFieldRules();
FieldRules PersistentVolumeClaimFieldRules();
FieldRules PersistentVolumeFieldRules();
FieldRules PodDisruptionBudgetFieldRules();
FieldRules EventFieldRules();
FieldRules StorageClassFieldRules();
FieldRules PyTorchJobFieldRules();  // pytorchjob_fields.cc

}  // namespace pjemu::api
