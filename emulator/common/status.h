// Status and Result<T>: the error values that cross every module boundary in pjemu.
// Codes mirror the Kubernetes API reasons so the API server maps them 1:1 onto HTTP codes and
// Status objects (see ToStatusJson). Exceptions from third-party libraries are caught in the
// function that calls them and turned into a Status; no exception crosses a module boundary.
// Thread safety: plain values, safe to copy between threads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "emulator/common/json_object_map.h"

namespace pjemu {

// nlohmann::json whose objects are JsonObjectMap's sorted vectors (json_object_map.h): the
// order and texts std::map gave, one allocation per object.
using Json = nlohmann::basic_json<JsonObjectMap>;

enum class Code {
  kOk = 0,
  kBadRequest,            // 400 BadRequest
  kUnauthorized,          // 401 Unauthorized
  kForbidden,             // 403 Forbidden
  kNotFound,              // 404 NotFound
  kMethodNotAllowed,      // 405 MethodNotAllowed
  kAlreadyExists,         // 409 AlreadyExists
  kConflict,              // 409 Conflict
  kExpired,               // 410 Expired (watch resourceVersion too old)
  kRequestEntityTooLarge, // 413 RequestEntityTooLarge
  kUnsupportedMediaType,  // 415 UnsupportedMediaType
  kInvalid,               // 422 Invalid (details.causes carries the field errors)
  kTooManyRequests,       // 429 TooManyRequests
  kInternal,              // 500 InternalError
  kUnavailable,           // 503 ServiceUnavailable (injected API faults use it)
  kTimeout,               // 504 Timeout
};

// The Kubernetes reason string ("NotFound", "InternalError", ...) and HTTP code of a Code.
const char* ReasonOf(Code code);
int HttpCodeOf(Code code);
// The inverse of ReasonOf (unknown reasons map to kInternal).
Code CodeFromReason(std::string_view reason);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, Json details = nullptr)
      : code_(code), message_(std::move(message)), details_(std::move(details)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Kubernetes StatusDetails ({name, group, kind, causes[], retryAfterSeconds}) or null.
  const Json& details() const { return details_; }

  // Prefixes the message with context, kwok style: "create pod x: <message>".
  Status WithContext(const std::string& context) const;
  // Marks a status that a controller must not retry (controller-runtime's TerminalError).
  Status Terminal() const;
  bool terminal() const { return terminal_; }

  // "NotFound: pods \"x\" not found".
  std::string ToString() const;
  // The v1 Status object the API server sends for a failure.
  Json ToStatusJson() const;
  // Parses a v1 Status object (as an HTTP client receives it); anything else is kInternal.
  static Status FromStatusJson(const Json& j, int http_code);

 private:
  Code code_ = Code::kOk;
  std::string message_;
  Json details_;
  bool terminal_ = false;
};

// Convenience constructors with the real API server's message shapes.
Status NotFoundError(const std::string& resource_group, const std::string& name);
Status AlreadyExistsError(const std::string& resource_group, const std::string& name);
Status ConflictError(const std::string& resource_group, const std::string& name);
Status BadRequestError(std::string message);
Status InternalError(std::string message);

// Result<T>: a T, or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  // On a temporary, a copy: `RETURN_IF_ERROR(store.Get(...).status())` must not keep a
  // reference into the destroyed Result (a use-after-free found by tests/limits).
  Status status() && { return ok() ? Status() : std::get<Status>(std::move(v_)); }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

#define PJEMU_CONCAT_INNER(a, b) a##b
#define PJEMU_CONCAT(a, b) PJEMU_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the Status of expr (a Status or Result) when it is not OK.
#define RETURN_IF_ERROR(expr)                                     \
  do {                                                            \
    const auto& _pjemu_s = (expr);                                \
    if (!::pjemu::internal::StatusOf(_pjemu_s).ok())              \
      return ::pjemu::internal::StatusOf(_pjemu_s);               \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): lhs = value of a Result, or returns its Status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(PJEMU_CONCAT(_pjemu_r, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

namespace internal {
inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace pjemu
