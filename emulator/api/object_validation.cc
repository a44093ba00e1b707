#include "emulator/api/object_validation.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/json_fields.h"

namespace pjemu::api {

std::string GoQuote(std::string_view s) {
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ValueText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

FieldError NotSupportedError(std::string field, const std::string& value,
                             const std::vector<std::string>& supported) {
  std::string detail = "supported values: ";
  for (std::size_t i = 0; i < supported.size(); ++i) {
    detail += (i ? ", " : "") + GoQuote(supported[i]);
  }
  return {FieldError::Type::kNotSupported, std::move(field), GoQuote(value), detail};
}

void CheckSupported(const Json& v, const std::string& field,
                    const std::vector<std::string>& supported, std::vector<FieldError>* errs) {
  if (v.is_null()) return;
  const std::string text = ValueText(v);
  if (std::find(supported.begin(), supported.end(), text) == supported.end()) {
    errs->push_back(NotSupportedError(field, text, supported));
  }
}

Status InvalidObject(const ResourceType& type, const Json& object,
                     const std::vector<FieldError>& errs) {
  if (errs.empty()) return Status::Ok();
  const std::string name = Str(Field(object, "metadata"), "name");
  Json causes = Json::array();
  std::string list;
  for (std::size_t i = 0; i < errs.size(); ++i) {
    const std::string text = errs[i].ToString();
    list += (i ? ", " : "") + text;
    causes.push_back({{"reason", errs[i].CauseReason()},
                      {"message", text.substr(errs[i].field.size() + 2)},
                      {"field", errs[i].field}});
  }
  if (errs.size() > 1) list = "[" + list + "]";
  const std::string kind = type.group.empty() ? type.kind : type.kind + "." + type.group;
  Json details = {{"name", name}, {"kind", type.kind}, {"causes", causes}};
  if (!type.group.empty()) details["group"] = type.group;
  return Status(Code::kInvalid, kind + " " + GoQuote(name) + " is invalid: " + list, details);
}

Status WebhookDenied(const ResourceType& type, const std::string& webhook, const Json& object,
                     const std::vector<FieldError>& errs) {
  Status invalid = InvalidObject(type, object, errs);
  if (invalid.ok()) return invalid;
  const std::string& m = invalid.message();
  const std::string list = m.substr(m.find(" is invalid: ") + 13);
  return Status(Code::kForbidden,
                "admission webhook \"" + webhook + "\" denied the request: " + list,
                invalid.details());
}

Status UndecodableObject(const ResourceType& type, const std::string& why) {
  return BadRequestError(type.kind + " in version \"" + type.version +
                         "\" cannot be handled as a " + type.kind + ": " + why);
}

std::vector<std::string> ValidateConfigMapKey(std::string_view key) {
  // '[-._a-zA-Z0-9]+', checked by hand: std::regex recurses per character, and a key can be as
  // long as a request body.
  auto key_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  };
  std::vector<std::string> errs;
  if (key.size() > 253) errs.push_back("must be no more than 253 characters");
  if (key.empty() || !std::all_of(key.begin(), key.end(), key_char)) {
    errs.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
        "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    errs.push_back("must not be '.'");
  } else if (key == "..") {
    errs.push_back("must not be '..'");
  } else if (key.substr(0, 2) == "..") {
    errs.push_back("must not start with '..'");
  }
  return errs;
}

std::vector<FieldError> ValidatePathNoBacksteps(const std::string& path, const std::string& field) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) {
      return {{FieldError::Type::kInvalid, field, GoQuote(path), "must not contain '..'"}};
    }
    start = end + 1;
  }
  return {};
}

std::vector<FieldError> ValidateLocalDescendingPath(const std::string& path,
                                                    const std::string& field) {
  std::vector<FieldError> errs;
  if (!path.empty() && path[0] == '/') {
    errs.push_back({FieldError::Type::kInvalid, field, GoQuote(path), "must be a relative path"});
  }
  for (FieldError& e : ValidatePathNoBacksteps(path, field)) errs.push_back(std::move(e));
  return errs;
}

std::vector<FieldError> ValidateLocalNonReservedPath(const std::string& path,
                                                     const std::string& field) {
  std::vector<FieldError> errs = ValidateLocalDescendingPath(path, field);
  if (errs.empty() && path.rfind("..", 0) == 0) {
    errs.push_back({FieldError::Type::kInvalid, field, GoQuote(path), "must not start with '..'"});
  }
  return errs;
}

std::vector<FieldError> ValidateHostPathSource(const Json& source, const std::string& field) {
  static const std::vector<std::string> kTypes = {
      "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
      "File", "FileOrCreate", "Socket"};
  const std::string path = Str(source, "path");
  if (path.empty()) return {{FieldError::Type::kRequired, field + ".path", "", ""}};
  std::vector<FieldError> errs = ValidatePathNoBacksteps(path, field + ".path");
  CheckSupported(Field(source, "type"), field + ".type", kTypes, &errs);
  return errs;
}

}  // namespace pjemu::api
