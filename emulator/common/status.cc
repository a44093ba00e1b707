#include "emulator/common/status.h"

#include <array>

namespace pjemu {
namespace {

struct CodeInfo {
  Code code;
  const char* reason;
  int http;
};

constexpr std::array<CodeInfo, 16> kCodes{{
    {Code::kOk, "", 200},
    {Code::kBadRequest, "BadRequest", 400},
    {Code::kUnauthorized, "Unauthorized", 401},
    {Code::kForbidden, "Forbidden", 403},
    {Code::kNotFound, "NotFound", 404},
    {Code::kMethodNotAllowed, "MethodNotAllowed", 405},
    {Code::kAlreadyExists, "AlreadyExists", 409},
    {Code::kConflict, "Conflict", 409},
    {Code::kExpired, "Expired", 410},
    {Code::kRequestEntityTooLarge, "RequestEntityTooLarge", 413},
    {Code::kUnsupportedMediaType, "UnsupportedMediaType", 415},
    {Code::kInvalid, "Invalid", 422},
    {Code::kTooManyRequests, "TooManyRequests", 429},
    {Code::kInternal, "InternalError", 500},
    {Code::kUnavailable, "ServiceUnavailable", 503},
    {Code::kTimeout, "Timeout", 504},
}};

const CodeInfo& InfoOf(Code code) {
  for (const auto& info : kCodes) {
    if (info.code == code) return info;
  }
  return kCodes[13];  // kInternal
}

// StatusDetails for "<plural>[.<group>]" and a name, as the real server fills them.
Json DetailsFor(const std::string& resource_group, const std::string& name) {
  auto dot = resource_group.find('.');
  Json d = {{"name", name}, {"kind", resource_group.substr(0, dot)}};
  if (dot != std::string::npos) d["group"] = resource_group.substr(dot + 1);
  return d;
}

}  // namespace

const char* ReasonOf(Code code) { return InfoOf(code).reason; }
int HttpCodeOf(Code code) { return InfoOf(code).http; }

Code CodeFromReason(std::string_view reason) {
  for (const auto& info : kCodes) {
    if (reason == info.reason && info.code != Code::kOk) return info.code;
  }
  return Code::kInternal;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = context + ": " + message_;
  return s;
}

Status Status::Terminal() const {
  Status s = *this;
  s.terminal_ = true;
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ReasonOf(code_)) + ": " + message_;
}

Json Status::ToStatusJson() const {
  Json j = {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", Json::object()},
            {"status", ok() ? "Success" : "Failure"},
            {"message", message_},
            {"reason", ReasonOf(code_)},
            {"code", HttpCodeOf(code_)}};
  if (!details_.is_null()) j["details"] = details_;
  return j;
}

Status Status::FromStatusJson(const Json& j, int http_code) {
  if (!j.is_object() || j.value("kind", "") != "Status") {
    return Status(Code::kInternal, "unexpected response (HTTP " + std::to_string(http_code) + ")");
  }
  Code code = CodeFromReason(j.value("reason", ""));
  if (code == Code::kInternal && http_code != 500) {
    for (const auto& info : kCodes) {
      if (info.http == http_code && info.code != Code::kOk) {
        code = info.code;
        break;
      }
    }
  }
  return Status(code, j.value("message", ""), j.contains("details") ? j["details"] : Json());
}

Status NotFoundError(const std::string& resource_group, const std::string& name) {
  return Status(Code::kNotFound, resource_group + " \"" + name + "\" not found",
                DetailsFor(resource_group, name));
}

Status AlreadyExistsError(const std::string& resource_group, const std::string& name) {
  return Status(Code::kAlreadyExists, resource_group + " \"" + name + "\" already exists",
                DetailsFor(resource_group, name));
}

Status ConflictError(const std::string& resource_group, const std::string& name) {
  return Status(Code::kConflict,
                "Operation cannot be fulfilled on " + resource_group + " \"" + name +
                    "\": the object has been modified; please apply your changes to the latest "
                    "version and try again",
                DetailsFor(resource_group, name));
}

Status BadRequestError(std::string message) { return Status(Code::kBadRequest, std::move(message)); }
Status InternalError(std::string message) { return Status(Code::kInternal, std::move(message)); }

}  // namespace pjemu
