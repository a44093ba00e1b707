// ObjectMeta helpers of the store: read and write metadata fields of wire-form objects, validate
// metadata on create and update with kube-apiserver's messages, and build 422 Invalid Statuses
// for the store's own checks (admission proper is each type's, api::ResourceType::admission).
// Thread safety: free functions over values; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::store {

// One field error, as k8s.io/apimachinery/pkg/util/validation/field.Error.
struct FieldError {
  std::string reason;  // "FieldValueInvalid", "FieldValueRequired", "FieldValueForbidden", ...
  std::string field;   // "metadata.name"
  std::string detail;  // "Invalid value: \"X\": a lowercase RFC 1123 ..." (no field prefix)
};
FieldError RequiredField(std::string field, const std::string& detail);
FieldError InvalidField(std::string field, const Json& value, const std::string& detail);
FieldError ForbiddenField(std::string field, const std::string& detail);

// The 422 Invalid Status: `<Kind>[.<group>] "<name>" is invalid: <field>: <detail>` (several
// errors: `[a, b]`), with details {name, group, kind: Kind, causes[{reason, message, field}]}.
Status InvalidError(const api::ResourceType& type, const std::string& name,
                    const std::vector<FieldError>& errors);

// 409 Conflict "Operation cannot be fulfilled on <rg> "<name>": Precondition failed: <what> in
// precondition: <want>, <what> in object meta: <have>" (what: "UID" or "ResourceVersion").
Status PreconditionFailedError(const std::string& resource_group, const std::string& name,
                               const std::string& what, const std::string& want,
                               const std::string& have);

// metadata.<field> as a string ("" when absent or not a string).
std::string MetaString(const Json& object, const char* field);
// The object's metadata, created as {} when missing. REQUIRES: object is a JSON object.
Json& MutableMeta(Json& object);
std::uint64_t ParseRv(const std::string& rv);  // 0 when not a number
// The finalizers (strings only) of an object.
std::vector<std::string> Finalizers(const Json& object);
void SetFinalizers(Json& object, const std::vector<std::string>& finalizers);
bool HasFinalizer(const Json& object, const std::string& finalizer);

// Object-name rules per kind: namespaces are DNS-1123 labels, services DNS-1035 labels, the rest
// DNS-1123 subdomains. Returns the problems (empty when valid).
std::vector<std::string> ValidateObjectName(const api::ResourceType& type, const std::string& name);
// Metadata checks shared by create and update: name (when present), labels, annotations keys,
// ownerReferences' required fields, finalizer names; for pods also ValidatePodContainerNames.
std::vector<FieldError> ValidateObjectMeta(const api::ResourceType& type, const Json& object);
// Container names of a pod (spec.containers, spec.initContainers) as ValidatePodSpec checks
// them: required, DNS-1123 labels, unique. They become the kubelet's log folder names, so a
// name like "../x" must never get past the store.
std::vector<FieldError> ValidatePodContainerNames(const Json& pod);

// A random UUID (version 4 layout) drawn from `next`, which returns uniform 64-bit values.
template <typename Next>
std::string MakeUid(Next next) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t hi = next(), lo = next();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;                         // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  std::string out;
  for (int i = 0; i < 32; ++i) {
    std::uint64_t word = i < 16 ? hi : lo;
    int shift = 60 - 4 * (i % 16);
    out += kHex[(word >> shift) & 0xF];
    if (i == 7 || i == 11 || i == 15 || i == 19) out += '-';
  }
  return out;
}

}  // namespace pjemu::store
