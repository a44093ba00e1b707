#include "emulator/api/json_fields.h"

namespace pjemu::api {

const Json& Field(const Json& obj, const char* key) {
  static const Json kNull = nullptr;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

const Json& FieldAt(const Json& obj, std::initializer_list<const char*> path) {
  const Json* cur = &obj;
  for (const char* key : path) cur = &Field(*cur, key);
  return *cur;
}

std::string Str(const Json& obj, const char* key) {
  const Json& v = Field(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

std::optional<std::int64_t> OptInt(const Json& obj, const char* key) {
  const Json& v = Field(obj, key);
  if (!v.is_number()) return std::nullopt;
  return v.get<std::int64_t>();
}

const Json& ArrayOr(const Json& j) {
  static const Json kEmpty = Json::array();
  return j.is_array() ? j : kEmpty;
}

const Json& ObjectOr(const Json& j) {
  static const Json kEmpty = Json::object();
  return j.is_object() ? j : kEmpty;
}

bool Deleting(const Json& object) {
  return !FieldAt(object, {"metadata", "deletionTimestamp"}).is_null();
}

}  // namespace pjemu::api
