#include "emulator/apiserver/paths.h"

#include <charconv>

namespace pjemu::apiserver {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

}  // namespace

Status UnknownPathError() {
  return Status(Code::kNotFound, "the server could not find the requested resource",
                Json::object());
}

std::string Query::Get(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

std::vector<std::string> Query::GetAll(const std::string& key) const {
  auto it = all_.find(key);
  return it == all_.end() ? std::vector<std::string>() : it->second;
}

Result<bool> Query::GetBool(const std::string& key, bool fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  auto value = ParseBool(it->second);
  if (!value) {
    return BadRequestError("invalid value for query parameter " + key + ": strconv.ParseBool: " +
                           "parsing \"" + it->second + "\": invalid syntax");
  }
  return *value;
}

Result<std::optional<long long>> Query::GetInt(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::optional<long long>();
  const std::string& text = it->second;
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return BadRequestError("invalid value for query parameter " + key +
                           ": strconv.ParseInt: " + "parsing \"" + text + "\": invalid syntax");
  }
  return std::optional<long long>(value);
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "1" || text == "t" || text == "T" || text == "TRUE" || text == "true" ||
      text == "True") {
    return true;
  }
  if (text == "0" || text == "f" || text == "F" || text == "FALSE" || text == "false" ||
      text == "False") {
    return false;
  }
  return std::nullopt;
}

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<Query> ParseQuery(std::string_view raw) {
  Query query;
  if (raw.empty()) return query;
  for (std::string_view pair : Split(raw, '&')) {
    if (pair.empty()) continue;
    std::size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), true);
    auto value = PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!key || !value) {
      return BadRequestError("invalid query string: malformed escape in \"" + std::string(pair) +
                             "\"");
    }
    query.Set(*key, *value);
  }
  return query;
}

Status ValidatePathSegment(std::string_view segment, std::string_view what) {
  std::string field(what);
  if (segment == "." || segment == "..") {
    return BadRequestError(field + " may not be \"" + std::string(segment) + "\"");
  }
  if (segment.find('/') != std::string_view::npos) {
    return BadRequestError(field + " may not contain '/'");
  }
  if (segment.find('%') != std::string_view::npos) {
    return BadRequestError(field + " may not contain '%'");
  }
  if (segment.size() > 253) {
    return BadRequestError(field + " must be no more than 253 characters");
  }
  return Status::Ok();
}

Result<ApiPath> ParseTarget(std::string_view target, Query* query) {
  std::size_t qpos = target.find('?');
  std::string_view raw_path = target.substr(0, qpos);
  ASSIGN_OR_RETURN(*query,
                   ParseQuery(qpos == std::string_view::npos ? "" : target.substr(qpos + 1)));
  if (raw_path.empty() || raw_path[0] != '/') return UnknownPathError();

  std::vector<std::string> segs;
  auto raw_segs = Split(raw_path.substr(1), '/');
  for (std::size_t i = 0; i < raw_segs.size(); ++i) {
    if (raw_segs[i].empty()) {
      if (i + 1 == raw_segs.size()) break;  // a trailing slash
      return UnknownPathError();            // "//"
    }
    auto seg = PercentDecode(raw_segs[i], false);
    if (!seg) return BadRequestError("malformed escape in the URL path");
    RETURN_IF_ERROR(ValidatePathSegment(*seg, "path segment"));
    segs.push_back(std::move(*seg));
  }
  ApiPath out;
  out.path = "/";
  for (std::size_t i = 0; i < segs.size(); ++i) out.path += (i ? "/" : "") + segs[i];

  // Resource requests: /api/v1/... and /apis/<group>/<version>/...
  std::string group, version;
  std::size_t rest = 0;
  if (segs.size() >= 3 && segs[0] == "api") {
    version = segs[1];
    rest = 2;
  } else if (segs.size() >= 4 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    rest = 3;
  } else {
    return out;  // non-resource (discovery, /version, /openapi/..., health)
  }
  std::vector<std::string> r(segs.begin() + rest, segs.end());
  std::string plural;
  // namespaces/{ns}/{plural}[/{name}[/{sub}]] unless it names the Namespace object itself.
  bool namespace_object =
      r[0] == "namespaces" &&
      (r.size() <= 2 || (r.size() == 3 && (r[2] == "status" || r[2] == "finalize")));
  if (r[0] == "namespaces" && !namespace_object) {
    out.ns = r[1];
    r.erase(r.begin(), r.begin() + 2);
  }
  plural = r[0];
  if (r.size() >= 2) out.name = r[1];
  if (r.size() == 3) out.subresource = r[2];
  if (r.size() > 3) return UnknownPathError();

  const api::ResourceType* type = api::FindResource(group, plural);
  if (type == nullptr || !type->Serves(version)) return UnknownPathError();
  out.version = version;
  if (!out.ns.empty() && !type->namespaced) return UnknownPathError();
  if (!out.subresource.empty()) {
    bool known = (out.subresource == "status" && type->has_status) ||
                 (out.subresource == "scale" && type->scale != nullptr) ||
                 ((out.subresource == "log" || out.subresource == "eviction" ||
                   out.subresource == "exec" || out.subresource == "attach" ||
                   out.subresource == "portforward" || out.subresource == "binding") &&
                  type->plural == "pods");
    if (!known) return UnknownPathError();
  }
  if (!out.ns.empty()) RETURN_IF_ERROR(ValidatePathSegment(out.ns, "namespace"));
  if (!out.name.empty()) RETURN_IF_ERROR(ValidatePathSegment(out.name, "name"));
  out.type = type;
  return out;
}

}  // namespace pjemu::apiserver
