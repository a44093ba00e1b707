#include "emulator/apiserver/field_validation.h"

#include <map>
#include <set>

#include "emulator/api/known_fields.h"
#include "emulator/apiserver/protobuf_body.h"

namespace pjemu::apiserver {
namespace {

// The schema nodes: api's known-fields trees (a kind's from its row, the built-in shapes').
using Schema = api::KnownFields;
using api::ObjectFields, api::OpenFields;

Schema* Obj(const std::vector<const char*>& open_fields) { return ObjectFields(open_fields); }
const Schema* Open() { return OpenFields(); }
const Schema* ObjectMeta() { return api::ObjectMetaFields(); }

const Schema* SchemaOf(const api::ResourceType& type) {
  if (type.known_fields != nullptr) return type.known_fields();
  if (type.group == "storage.k8s.io" && type.plural == "storageclasses") {
    static const Schema* sc = [] {
      Schema* t =
          Obj({"apiVersion", "kind", "provisioner", "parameters", "reclaimPolicy", "mountOptions",
               "allowVolumeExpansion", "volumeBindingMode", "allowedTopologies"});
      t->fields["metadata"] = ObjectMeta();
      return t;
    }();
    return sc;
  }
  if (type.group == "policy" && type.plural == "poddisruptionbudgets") {
    static const Schema* pdb = [] {
      Schema* t = Obj({"apiVersion", "kind", "status"});
      t->fields["metadata"] = ObjectMeta();
      t->fields["spec"] =
          Obj({"minAvailable", "maxUnavailable", "selector", "unhealthyPodEvictionPolicy"});
      return t;
    }();
    return pdb;
  }
  if (!type.group.empty()) return Open();
  // Never destroyed, as the schemas it points to (a destroyed map would leave them unreachable:
  // LeakSanitizer's report at exit).
  static const auto& kCore = *new std::map<std::string, const Schema*>([] {
    std::map<std::string, const Schema*> m;
    Schema* pod = Obj({"apiVersion", "kind", "status"});
    pod->fields["metadata"] = ObjectMeta();
    pod->fields["spec"] = api::PodSpecFields();
    m["pods"] = pod;
    for (const char* plural : {"services", "namespaces", "nodes"}) {
      Schema* s = Obj({"apiVersion", "kind", "spec", "status"});
      s->fields["metadata"] = ObjectMeta();
      m[plural] = s;
    }
    Schema* cm = Obj({"apiVersion", "kind", "data", "binaryData", "immutable"});
    cm->fields["metadata"] = ObjectMeta();
    m["configmaps"] = cm;
    // The config and storage types: their top-level fields (specs stay open below).
    static const std::map<std::string, std::vector<const char*>> kTopLevel = {
        {"secrets", {"apiVersion", "kind", "data", "stringData", "type", "immutable"}},
        {"persistentvolumeclaims", {"apiVersion", "kind", "spec", "status"}},
        {"persistentvolumes", {"apiVersion", "kind", "spec", "status"}},
    };
    for (const auto& [plural, fields] : kTopLevel) {
      Schema* t = Obj(fields);
      t->fields["metadata"] = ObjectMeta();
      m[plural] = t;
    }
    Schema* ev = Obj({"apiVersion", "kind", "action", "count", "eventTime", "firstTimestamp",
                      "involvedObject", "lastTimestamp", "message", "reason", "related",
                      "reportingComponent", "reportingInstance", "series", "source", "type"});
    ev->fields["metadata"] = ObjectMeta();
    m["events"] = ev;
    return m;
  }());
  auto it = kCore.find(type.plural);
  return it == kCore.end() ? Open() : it->second;
}

// Walks `value` against `schema`, collecting unknown paths; erases them when `prune`.
void Walk(const Schema* schema, Json& value, const std::string& path, bool prune,
          std::vector<std::string>* unknown) {
  if (schema->open && schema->fields.empty() && !schema->items && !schema->values) return;
  if (schema->items) {
    if (!value.is_array()) return;
    for (std::size_t i = 0; i < value.size(); ++i) {
      Walk(schema->items, value[i], path + "[" + std::to_string(i) + "]", prune, unknown);
    }
    return;
  }
  if (!value.is_object()) return;
  std::vector<std::string> drop;
  for (auto it = value.begin(); it != value.end(); ++it) {
    std::string child = path.empty() ? it.key() : path + "." + it.key();
    if (schema->values) {
      Walk(schema->values, it.value(), child, prune, unknown);
      continue;
    }
    auto f = schema->fields.find(it.key());
    if (f == schema->fields.end()) {
      unknown->push_back(child);
      drop.push_back(it.key());
    } else {
      Walk(f->second, it.value(), child, prune, unknown);
    }
  }
  if (prune) {
    for (const auto& key : drop) value.erase(key);
  }
}

struct Frame {
  bool is_array = false;
  std::size_t index = 0;
  std::set<std::string> keys;
  std::string key;
};

std::string FramesPath(const std::vector<Frame>& frames, std::size_t count) {
  std::string path;
  for (std::size_t i = 0; i < count; ++i) {
    if (frames[i].is_array) {
      path += "[" + std::to_string(frames[i].index) + "]";
    } else if (!frames[i].key.empty()) {
      path += (path.empty() ? "" : ".") + frames[i].key;
    }
  }
  return path;
}

}  // namespace

Result<FieldValidation> ParseFieldValidation(const std::string& value) {
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Warn" || value.empty()) return FieldValidation::kWarn;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return BadRequestError("fieldValidation parameter unsupported: " + value);
}

std::vector<std::string> UnknownFields(const api::ResourceType& type, const Json& object) {
  std::vector<std::string> unknown;
  Json copy = object;
  Walk(SchemaOf(type), copy, "", false, &unknown);
  return unknown;
}

Status CheckJsonDepth(std::string_view body, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return BadRequestError(std::string("invalid character '") + c + "' exceeded max depth (" +
                               std::to_string(max_depth) + ")");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::Ok();
}

Result<Json> DecodeBody(const api::ResourceType& type, const std::string& body,
                        FieldValidation mode, std::vector<std::string>* warnings) {
  if (IsProtobufBody(body)) {
    // kubectl 1.33's typed clients (create configmap/secret/namespace) send protobuf.
    ASSIGN_OR_RETURN(Json decoded, ProtobufBodyToJson(type, body));
    return DecodeBody(type, decoded.dump(-1, ' ', false, Json::error_handler_t::replace), mode,
                      warnings);
  }
  if (Status depth = CheckJsonDepth(body); !depth.ok()) {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind + ": " + depth.message());
  }
  std::vector<Frame> frames;
  std::vector<std::string> duplicates;
  Json object;
  try {
    object = Json::parse(body, [&](int, Json::parse_event_t event, Json& parsed) {
      switch (event) {
        case Json::parse_event_t::object_start:
        case Json::parse_event_t::array_start:
          frames.push_back(Frame{event == Json::parse_event_t::array_start, 0, {}, ""});
          break;
        case Json::parse_event_t::key:
          if (!frames.empty()) {
            std::string key = parsed.get<std::string>();
            if (!frames.back().keys.insert(key).second) {
              std::string base = FramesPath(frames, frames.size() - 1);
              duplicates.push_back(base.empty() ? key : base + "." + key);
            }
            frames.back().key = key;
          }
          break;
        case Json::parse_event_t::object_end:
        case Json::parse_event_t::array_end:
          if (!frames.empty()) frames.pop_back();
          if (!frames.empty() && frames.back().is_array) ++frames.back().index;
          break;
        case Json::parse_event_t::value:
          if (!frames.empty() && frames.back().is_array) ++frames.back().index;
          break;
      }
      return true;
    });
  } catch (const Json::exception& e) {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind + ": " + e.what());
  }
  if (!object.is_object()) {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind +
                           ": the request body is not a JSON object");
  }
  std::vector<std::string> unknown;
  Walk(SchemaOf(type), object, "", mode != FieldValidation::kStrict, &unknown);
  std::vector<std::string> problems;
  for (const auto& u : unknown) problems.push_back("unknown field \"" + u + "\"");
  for (const auto& d : duplicates) problems.push_back("duplicate field \"" + d + "\"");
  if (problems.empty()) return object;
  if (mode == FieldValidation::kStrict) {
    std::string message;
    for (const auto& p : problems) message += (message.empty() ? "" : ", ") + p;
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind +
                           ": strict decoding error: " + message);
  }
  if (mode == FieldValidation::kWarn && warnings) {
    warnings->insert(warnings->end(), problems.begin(), problems.end());
  }
  return object;
}

}  // namespace pjemu::apiserver
