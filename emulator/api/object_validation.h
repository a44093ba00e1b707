// The shared vocabulary of the core types' admission (config_validation.h, pod_validation.h):
// apimachinery field errors (FieldError, pytorchjob_validation.h) turned into the API server's
// 422 Invalid and 400 decode Statuses, and the small checks several types share.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// Go's %q of a string: `"a\"b"`.
std::string GoQuote(std::string_view s);
// A value as a field error shows it: a string as it is, anything else as its JSON.
std::string ValueText(const Json& v);
// field.NotSupported: `<field>: Unsupported value: "x": supported values: "a", "b"`.
FieldError NotSupportedError(std::string field, const std::string& value,
                             const std::vector<std::string>& supported);
// NotSupportedError when `v` is present and not one of `supported` (absent is fine: defaulting
// or the field's own rules decide).
void CheckSupported(const Json& v, const std::string& field,
                    const std::vector<std::string>& supported, std::vector<FieldError>* errs);

// 422 `<Kind>[.<group>] "<name>" is invalid: <e>` (several: `[e1, e2]`), details {name, group,
// kind, causes[{reason, message, field}]}; OK when errs is empty.
Status InvalidObject(const ResourceType& type, const Json& object,
                     const std::vector<FieldError>& errs);
// 403 `admission webhook "<webhook>" denied the request: <e>` (several: `[e1, e2]`), with
// InvalidObject's details: what controller-runtime answers for a validating webhook's field
// errors (admission.Denied). OK when errs is empty.
Status WebhookDenied(const ResourceType& type, const std::string& webhook, const Json& object,
                     const std::vector<FieldError>& errs);
// 400 `<Kind> in version "v1" cannot be handled as a <Kind>: <why>`: the body did not decode
// into the Go type (a number where a string goes, bad base64).
Status UndecodableObject(const ResourceType& type, const std::string& why);

// validation.IsConfigMapKey: the problems of a ConfigMap/Secret data key (empty when valid).
std::vector<std::string> ValidateConfigMapKey(std::string_view key);

// validatePathNoBacksteps / validateLocalDescendingPath / validateLocalNonReservedPath: a
// relative path with no `..` element (a subPath, an items[].path).
std::vector<FieldError> ValidatePathNoBacksteps(const std::string& path, const std::string& field);
std::vector<FieldError> ValidateLocalDescendingPath(const std::string& path,
                                                    const std::string& field);
std::vector<FieldError> ValidateLocalNonReservedPath(const std::string& path,
                                                     const std::string& field);

// validateHostPathVolumeSource, a pod's volume and a PersistentVolume's alike: `path` required
// and without `..`, `type` one of the HostPathType values when set.
std::vector<FieldError> ValidateHostPathSource(const Json& source, const std::string& field);

}  // namespace pjemu::api
