#include "emulator/store/object_meta.h"

#include <cstdlib>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/selector.h"
#include "emulator/common/strings.h"

namespace pjemu::store {
namespace {

// Go's %#v for the values we report: quoted strings, JSON for the rest.
// Invalid UTF-8 (a hostile name) is replaced, not thrown: found by fuzz_router.
std::string GoValue(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

FieldError RequiredField(std::string field, const std::string& detail) {
  return {"FieldValueRequired", std::move(field),
          "Required value" + (detail.empty() ? "" : ": " + detail)};
}

FieldError InvalidField(std::string field, const Json& value, const std::string& detail) {
  return {"FieldValueInvalid", std::move(field),
          "Invalid value: " + GoValue(value) + ": " + detail};
}

FieldError ForbiddenField(std::string field, const std::string& detail) {
  return {"FieldValueForbidden", std::move(field), "Forbidden: " + detail};
}

Status InvalidError(const api::ResourceType& type, const std::string& name,
                    const std::vector<FieldError>& errors) {
  std::vector<std::string> parts;
  Json causes = Json::array();
  for (const auto& e : errors) {
    parts.push_back(e.field + ": " + e.detail);
    causes.push_back({{"reason", e.reason}, {"message", e.detail}, {"field", e.field}});
  }
  std::string kind = type.group.empty() ? type.kind : type.kind + "." + type.group;
  std::string list = parts.size() == 1 ? parts[0] : "[" + Join(parts, ", ") + "]";
  Json details = {{"name", name}, {"kind", type.kind}, {"causes", causes}};
  if (!type.group.empty()) details["group"] = type.group;
  return Status(Code::kInvalid, kind + " \"" + name + "\" is invalid: " + list, details);
}

Status PreconditionFailedError(const std::string& resource_group, const std::string& name,
                               const std::string& what, const std::string& want,
                               const std::string& have) {
  return Status(Code::kConflict,
                "Operation cannot be fulfilled on " + resource_group + " \"" + name +
                    "\": Precondition failed: " + what + " in precondition: " + want + ", " + what +
                    " in object meta: " + have,
                ConflictError(resource_group, name).details());
}

std::string MetaString(const Json& object, const char* field) {
  return api::Str(api::Field(object, "metadata"), field);
}

Json& MutableMeta(Json& object) {
  Json& m = object["metadata"];
  if (!m.is_object()) m = Json::object();
  return m;
}

std::uint64_t ParseRv(const std::string& rv) {
  if (rv.empty() || rv.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoull(rv.c_str(), nullptr, 10);
}

std::vector<std::string> Finalizers(const Json& object) {
  std::vector<std::string> out;
  if (!object.is_object() || !object.contains("metadata")) return out;
  const Json& m = object["metadata"];
  if (!m.is_object() || !m.contains("finalizers") || !m["finalizers"].is_array()) return out;
  for (const auto& f : m["finalizers"]) {
    if (f.is_string()) out.push_back(f.get<std::string>());
  }
  return out;
}

void SetFinalizers(Json& object, const std::vector<std::string>& finalizers) {
  Json& m = MutableMeta(object);
  if (finalizers.empty()) {
    m.erase("finalizers");
  } else {
    m["finalizers"] = finalizers;
  }
}

bool HasFinalizer(const Json& object, const std::string& finalizer) {
  for (const auto& f : Finalizers(object)) {
    if (f == finalizer) return true;
  }
  return false;
}

std::vector<std::string> ValidateObjectName(const api::ResourceType& type,
                                            const std::string& name) {
  if (type.plural == "namespaces" && type.group.empty()) return api::ValidateDns1123Label(name);
  if (type.plural == "services" && type.group.empty()) return api::ValidateDns1035Label(name);
  return api::ValidateDns1123Subdomain(name);
}

namespace {

void ValidateLabels(const Json& meta, std::vector<FieldError>* errs) {
  if (!meta.contains("labels")) return;
  const Json& labels = meta["labels"];
  if (!labels.is_object() && !labels.is_null()) {
    errs->push_back(InvalidField("metadata.labels", labels, "must be a map of strings"));
    return;
  }
  if (!labels.is_object()) return;
  for (const auto& [k, v] : labels.items()) {
    if (auto e = api::ValidateQualifiedName(k); !e.empty()) {
      errs->push_back(InvalidField("metadata.labels", k, Join(e, "; ")));
    }
    if (!v.is_string()) {
      errs->push_back(InvalidField("metadata.labels", v, "label values must be strings"));
    } else if (auto e = api::ValidateLabelValue(v.get<std::string>()); !e.empty()) {
      errs->push_back(InvalidField("metadata.labels", v, Join(e, "; ")));
    }
  }
}

void ValidateAnnotations(const Json& meta, std::vector<FieldError>* errs) {
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return;
  for (const auto& [k, v] : meta["annotations"].items()) {
    if (auto e = api::ValidateQualifiedName(k); !e.empty()) {
      errs->push_back(InvalidField("metadata.annotations", k, Join(e, "; ")));
    }
    if (!v.is_string()) {
      errs->push_back(InvalidField("metadata.annotations", v, "annotation values must be strings"));
    }
  }
}

// Each reference names apiVersion, kind, name and uid; at most one is the controller.
void ValidateOwnerReferences(const Json& meta, std::vector<FieldError>* errs) {
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return;
  int controllers = 0;
  for (const auto& ref : meta["ownerReferences"]) {
    for (auto [f, what] : {std::pair<const char*, const char*>{"apiVersion", "version"},
                           {"kind", "kind"},
                           {"name", "name"},
                           {"uid", "uid"}}) {
      std::string field = std::string("metadata.ownerReferences.") + f;
      const Json* v = ref.is_object() && ref.contains(f) ? &ref[f] : nullptr;
      if (v && !v->is_string()) {
        errs->push_back(InvalidField(field, *v, "must be a string"));
      } else if (!v || v->get<std::string>().empty()) {
        errs->push_back(InvalidField(field, "", std::string(what) + " must not be empty"));
      }
    }
    if (ref.is_object() && ref.contains("controller") && ref["controller"].is_boolean() &&
        ref["controller"].get<bool>()) {
      ++controllers;
    }
  }
  if (controllers > 1) {
    errs->push_back(InvalidField("metadata.ownerReferences", meta["ownerReferences"],
                                 "Only one reference can have Controller set to true"));
  }
}

void ValidateFinalizerNames(const Json& object, std::vector<FieldError>* errs) {
  const auto finalizers = Finalizers(object);
  for (std::size_t i = 0; i < finalizers.size(); ++i) {
    if (auto e = api::ValidateQualifiedName(finalizers[i]); !e.empty()) {
      errs->push_back(InvalidField("metadata.finalizers[" + std::to_string(i) + "]", finalizers[i],
                                   Join(e, "; ")));
    }
  }
}

}  // namespace

std::vector<FieldError> ValidateObjectMeta(const api::ResourceType& type, const Json& object) {
  std::vector<FieldError> errs;
  static const Json kEmpty = Json::object();
  auto it = object.find("metadata");
  const Json& meta = it != object.end() && it->is_object() ? *it : kEmpty;
  std::string name = MetaString(object, "name");
  if (!name.empty()) {
    if (auto e = ValidateObjectName(type, name); !e.empty()) {
      errs.push_back(InvalidField("metadata.name", name, Join(e, "; ")));
    }
  }
  ValidateLabels(meta, &errs);
  ValidateAnnotations(meta, &errs);
  // Wrongly typed fields that the code below (and the garbage collector) relies on.
  for (const char* f : {"ownerReferences", "finalizers"}) {
    if (meta.contains(f) && !meta[f].is_array() && !meta[f].is_null()) {
      errs.push_back(InvalidField(std::string("metadata.") + f, meta[f], "must be a list"));
    }
  }
  ValidateOwnerReferences(meta, &errs);
  ValidateFinalizerNames(object, &errs);
  if (type.plural == "pods" && type.group.empty()) {
    auto names = ValidatePodContainerNames(object);
    errs.insert(errs.end(), names.begin(), names.end());
  }
  return errs;
}

std::vector<FieldError> ValidatePodContainerNames(const Json& pod) {
  std::vector<FieldError> errs;
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return errs;
  std::set<std::string> seen;
  for (const char* list : {"containers", "initContainers"}) {
    auto containers = spec->find(list);
    if (containers == spec->end() || !containers->is_array()) continue;
    for (std::size_t i = 0; i < containers->size(); ++i) {
      const Json& c = (*containers)[i];
      std::string field = std::string("spec.") + list + "[" + std::to_string(i) + "].name";
      auto name = c.is_object() ? c.find("name") : c.end();
      if (!c.is_object() || name == c.end() || !name->is_string() ||
          name->get<std::string>().empty()) {
        errs.push_back(RequiredField(field, ""));
        continue;
      }
      const std::string value = name->get<std::string>();
      if (auto e = api::ValidateDns1123Label(value); !e.empty()) {
        errs.push_back(InvalidField(field, value, Join(e, "; ")));
      } else if (!seen.insert(value).second) {
        errs.push_back({"FieldValueDuplicate", field, "Duplicate value: " + GoValue(value)});
      }
    }
  }
  return errs;
}

}  // namespace pjemu::store
