// Status and Result<T>: the error values that cross every module boundary in pjemu.
// Codes mirror the Kubernetes API reasons so the API server maps them 1:1 onto HTTP codes and
// Status objects (see ToStatusJson). Exceptions from third-party libraries are caught in the
// function that calls them and turned into a Status; no exception crosses a module boundary.
// Thread safety: plain values, safe to copy between threads.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "emulator/common/json_object_map.h"

namespace pjemu {

// nlohmann::json whose objects are JsonObjectMap's sorted vectors (json_object_map.h): the
// order and texts std::map gave, one allocation per object.
using Json = nlohmann::basic_json<JsonObjectMap>;

namespace json_free {
// Trees nested deeper than this are freed without recursion (below).
inline constexpr int kRecursionDepth = 256;
inline thread_local int depth = 0;  // containers being freed on this thread, outermost first
}  // namespace json_free

}  // namespace pjemu

// How a Json value frees what it holds (nlohmann's json_value::destroy, specialized for Json
// before anything can use the library's own). The library's moves every member of an object or
// array onto a heap-allocated stack of its own, and each of theirs, before freeing any of them,
// so that no depth of nesting can overflow the call stack: that cost a tenth of the control
// plane's time, which builds and frees trees all the time. This frees a tree by plain recursion,
// each container's members by their destructors, and switches to the library's way (members
// moved to a stack, no recursion) for what lies below json_free::kRecursionDepth levels.
template <>
inline void pjemu::Json::json_value::destroy(nlohmann::detail::value_t t) {
  using nlohmann::detail::value_t;
  if ((t == value_t::object && object == nullptr) || (t == value_t::array && array == nullptr) ||
      (t == value_t::string && string == nullptr) || (t == value_t::binary && binary == nullptr)) {
    return;  // never made (a constructor that threw)
  }
  if (t == value_t::object || t == value_t::array) {
    if (pjemu::json_free::depth >= pjemu::json_free::kRecursionDepth) {
      // Deep: the members leave by a stack, each leaving its own members there before it goes.
      std::vector<pjemu::Json> stack;
      auto take_members = [&stack](pjemu::Json& from) {
        if (from.is_array()) {
          for (pjemu::Json& member : *from.m_value.array) stack.push_back(std::move(member));
          from.m_value.array->clear();
        } else if (from.is_object()) {
          for (auto& member : *from.m_value.object) stack.push_back(std::move(member.second));
          from.m_value.object->clear();
        }
      };
      if (t == value_t::array) {
        for (pjemu::Json& member : *array) stack.push_back(std::move(member));
        array->clear();
      } else {
        for (auto& member : *object) stack.push_back(std::move(member.second));
        object->clear();
      }
      while (!stack.empty()) {
        pjemu::Json last(std::move(stack.back()));
        stack.pop_back();
        take_members(last);
      }
    }
    ++pjemu::json_free::depth;
  }
  switch (t) {
    case value_t::object: {
      std::allocator<object_t> alloc;  // Json's AllocatorType
      std::allocator_traits<decltype(alloc)>::destroy(alloc, object);
      std::allocator_traits<decltype(alloc)>::deallocate(alloc, object, 1);
      break;
    }
    case value_t::array: {
      std::allocator<array_t> alloc;  // Json's AllocatorType
      std::allocator_traits<decltype(alloc)>::destroy(alloc, array);
      std::allocator_traits<decltype(alloc)>::deallocate(alloc, array, 1);
      break;
    }
    case value_t::string: {
      std::allocator<string_t> alloc;  // Json's AllocatorType
      std::allocator_traits<decltype(alloc)>::destroy(alloc, string);
      std::allocator_traits<decltype(alloc)>::deallocate(alloc, string, 1);
      break;
    }
    case value_t::binary: {
      std::allocator<binary_t> alloc;  // Json's AllocatorType
      std::allocator_traits<decltype(alloc)>::destroy(alloc, binary);
      std::allocator_traits<decltype(alloc)>::deallocate(alloc, binary, 1);
      break;
    }
    default:
      break;
  }
  if (t == value_t::object || t == value_t::array) --pjemu::json_free::depth;
}

namespace pjemu {

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
