// Status and Result<T> for pjemu-trainer: the trainer's own small copy of the error values, so
// that trainer/ builds against LibTorch alone (no emulator/common, no nlohmann; see README
// "Build"). The codes are the subset the trainer uses, with the emulator's names; main.cc maps
// them onto exit codes (exit_codes.h). Exceptions from LibTorch are caught where they are thrown
// and turned into a Status. Thread safety: plain values, safe to copy between threads.
//
// The macros have the emulator's names (RETURN_IF_ERROR, ASSIGN_OR_RETURN): a translation unit
// never includes both this header and emulator/common/status.h (the emulator does not include
// trainer/, and tools/check_layering.py keeps trainer/ from including emulator/).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace pjemu::trainer {

enum class Code {
  kOk = 0,
  kBadRequest,   // a bad flag (usage error)
  kNotFound,     // a missing file or folder
  kInvalid,      // a bad value: env variable, checkpoint of another shape, corrupt data
  kInternal,     // an I/O or library failure
  kUnavailable,  // a peer died: a collective failed
  kTimeout,      // a peer hung: a collective or the rendezvous timed out
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InternalError(std::string message) {
  return Status(Code::kInternal, std::move(message));
}
inline Status BadRequestError(std::string message) {
  return Status(Code::kBadRequest, std::move(message));
}

// Result<T>: a T, or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
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

namespace internal {
inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace pjemu::trainer

#define PJEMU_TRAINER_CONCAT_INNER(a, b) a##b
#define PJEMU_TRAINER_CONCAT(a, b) PJEMU_TRAINER_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the Status of expr (a Status or Result) when it is not OK.
#define RETURN_IF_ERROR(expr)                                 \
  do {                                                        \
    const auto& _pjemu_s = (expr);                            \
    if (!::pjemu::trainer::internal::StatusOf(_pjemu_s).ok()) \
      return ::pjemu::trainer::internal::StatusOf(_pjemu_s);  \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): lhs = value of a Result, or returns its Status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(PJEMU_TRAINER_CONCAT(_pjemu_r, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
