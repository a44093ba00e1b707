#include "emulator/api/json_fields.h"

#include <string_view>

namespace pjemu::api {

const Json& Field(const Json& obj, std::string_view key) {
  static const Json kNull = nullptr;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

const Json& FieldAt(const Json& obj, std::initializer_list<std::string_view> path) {
  const Json* cur = &obj;
  for (std::string_view key : path) cur = &Field(*cur, key);
  return *cur;
}

std::string Str(const Json& obj, std::string_view key) {
  const Json& v = Field(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

std::optional<std::int64_t> OptInt(const Json& obj, std::string_view key) {
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

std::string ObjectKey(const Json& object) {
  const Json& meta = Field(object, "metadata");
  const std::string ns = Str(meta, "namespace");
  return ns.empty() ? Str(meta, "name") : ns + "/" + Str(meta, "name");
}

bool Deleting(const Json& object) {
  return !FieldAt(object, {"metadata", "deletionTimestamp"}).is_null();
}

Json Projection(const Json& obj,
                std::initializer_list<std::initializer_list<std::string_view>> paths) {
  Json out = Json::object();
  for (const auto& path : paths) {
    const Json& value = FieldAt(obj, path);
    if (value.is_null()) continue;
    Json* at = &out;
    for (std::string_view name : path) {
      if (!at->is_object()) *at = Json::object();  // a shorter path's value gives way
      // Found by view, so a key the output has already (`metadata`) is not built again.
      auto& members = at->get_ref<Json::object_t&>();
      auto it = members.lower_bound(name);
      if (it == members.end() || it->first != name) it = members.emplace_hint(it, name, nullptr);
      at = &it->second;
    }
    *at = value;
  }
  return out;
}

Json StatusWriteBody(const Json& object, Json status) {
  Json body = Projection(object, {{"apiVersion"},
                                  {"kind"},
                                  {"metadata", "name"},
                                  {"metadata", "namespace"},
                                  {"metadata", "uid"},
                                  {"metadata", "resourceVersion"}});
  body["status"] = std::move(status);
  return body;
}

void AppendMember(Json& obj, std::string_view key, Json value) {
  auto& members = obj.get_ref<Json::object_t&>();
  members.emplace_hint(members.end(), key, std::move(value));
}

void SetIfAbsent(Json& obj, const char* key, Json value) {
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = std::move(value);
}

const Json* TrueCondition(const Json& object, std::string_view type) {
  for (const Json& c : ArrayOr(FieldAt(object, {"status", "conditions"}))) {
    if (Str(c, "type") == type && Str(c, "status") == "True") return &c;
  }
  return nullptr;
}

namespace {

// The first element of `list` matching a filter `?(@.key=="value")`, or nullptr.
const Json* FilterMatch(const Json& list, const std::string& filter) {
  const std::size_t eq = filter.find("==");
  if (eq == std::string::npos || filter.size() < eq + 5) return nullptr;
  const std::string key = filter.substr(4, eq - 4);
  std::string value = filter.substr(eq + 2, filter.size() - eq - 3);  // drops the ')'
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
    value = value.substr(1, value.size() - 2);
  }
  for (const Json& e : list) {
    if (Str(e, key.c_str()) == value) return &e;
  }
  return nullptr;
}

}  // namespace

Json MergePatchAt(std::string_view path, Json value) {
  std::size_t end = path.size();
  while (end > 0) {
    const std::size_t dot = path.rfind('.', end - 1);
    const std::size_t start = dot == std::string_view::npos ? 0 : dot + 1;
    value = Json{{std::string(path.substr(start, end - start)), std::move(value)}};
    if (dot == std::string_view::npos) break;
    end = dot;
  }
  return value;
}

const Json& JsonPathValue(const Json& obj, std::string_view path) {
  static const Json kNull;
  const Json* cur = &obj;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      std::size_t end = path.find_first_of(".[", i + 1);
      if (end == std::string_view::npos) end = path.size();
      const std::string key(path.substr(i + 1, end - i - 1));
      if (!cur->is_object() || !cur->contains(key)) return kNull;
      cur = &(*cur)[key];
      i = end;
    } else if (path[i] == '[') {
      std::size_t end = path.find(']', i);
      if (end == std::string_view::npos || !cur->is_array()) return kNull;
      std::string index(path.substr(i + 1, end - i - 1));
      if (index.rfind("?(@.", 0) == 0) {  // [?(@.type=="Completed")]: the first match
        cur = FilterMatch(*cur, index);
        if (!cur) return kNull;
        i = end + 1;
        continue;
      }
      if (!index.empty() && index.back() == ':') index.pop_back();  // [-1:] is the last one
      long n = 0;
      try {
        n = std::stol(index);
      } catch (...) {
        return kNull;
      }
      const long size = static_cast<long>(cur->size());
      if (n < 0) n += size;
      if (n < 0 || n >= size) return kNull;
      cur = &(*cur)[static_cast<std::size_t>(n)];
      i = end + 1;
    } else {
      return kNull;
    }
  }
  return *cur;
}

}  // namespace pjemu::api
