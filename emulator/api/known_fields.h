// Known fields: the tree of field names a type's objects may carry, which the API server's
// field validation (`fieldValidation=Strict|Warn|Ignore`) checks request bodies against. A
// kind's row in the resource table points at its tree (ResourceType::known_fields), so the API
// server asks the row, never the kind by name. Below an open node anything goes.
// Thread safety: the trees are built once (function-local statics) and never change.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace pjemu::api {

// A node: the known fields of an object, the node of an array's items or of a free-keyed map's
// values, or open (anything goes below this point).
struct KnownFields {
  std::map<std::string, const KnownFields*> fields;
  const KnownFields* items = nullptr;   // arrays: each element
  const KnownFields* values = nullptr;  // maps with free keys: each value
  bool open = true;
};

// The open node (nothing checked below it).
const KnownFields* OpenFields();
// A closed object whose `open_fields` are known and open below; add closed children through
// ->fields. The node lives for the whole program.
KnownFields* ObjectFields(const std::vector<const char*>& open_fields);
// An array whose items are `item`. The node lives for the whole program.
KnownFields* ArrayOf(const KnownFields* item);
// core/v1's ObjectMeta, PodSpec (containers and initContainers checked) and Container.
const KnownFields* ObjectMetaFields();
const KnownFields* PodSpecFields();
const KnownFields* ContainerFields();

// The PyTorchJob's (pytorchjob_fields.cc): spec, replica specs, runPolicy, elasticPolicy, the
// pod template's five metadata fields, PodSpec and Container.
const KnownFields* PyTorchJobKnownFields();

}  // namespace pjemu::api
