// Read helpers over wire-form JSON objects that never throw: a missing key, a null, or a value of
// the wrong type reads as absent. The one set every component uses to read a field of an object
// it did not build (a stored object may carry anything a client sent).
// Thread safety: pure functions over values; the returned references point into the argument or
// at immutable statics, so they live as long as the argument does.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::api {

// obj[key], or null when obj is not an object or lacks the key.
const Json& Field(const Json& obj, std::string_view key);
// Field along a path: FieldAt(pod, {"spec", "nodeName"}); null when any step is absent.
const Json& FieldAt(const Json& obj, std::initializer_list<std::string_view> path);
// obj[key] as a string; "" when absent or not a string.
std::string Str(const Json& obj, std::string_view key);
// obj[key] as an integer; nullopt when absent or not a JSON number.
std::optional<std::int64_t> OptInt(const Json& obj, std::string_view key);
// j when it is an array, else an empty array (for range-for over an optional list).
const Json& ArrayOr(const Json& j);
// j when it is an object, else an empty object.
const Json& ObjectOr(const Json& j);
// The value at a CRD printer column's JSONPath: dotted keys with optional [N] or [-N:] list
// steps (".status.phase", ".status.conditions[-1:].type"); null when any step is absent.
const Json& JsonPathValue(const Json& obj, std::string_view path);
// A JSON merge patch that sets the value at a dotted path (".spec.a.b" -> {"spec": {"a":
// {"b": value}}}). REQUIRES: dotted keys only, no list steps.
Json MergePatchAt(std::string_view path, Json value);
// True once metadata.deletionTimestamp is set: the object is being deleted (finalizers or a
// grace period hold it).
bool Deleting(const Json& object);
// "<namespace>/<name>" of an object, its name alone when cluster-scoped: the key of the actors'
// caches (client::ApplyToCache) and of their messages.
std::string ObjectKey(const Json& object);
// Defaulting: obj[key] = value when obj lacks the key or holds null there. REQUIRES: obj is an
// object.
void SetIfAbsent(Json& obj, const char* key, Json value);
// Adds member `key` = `value` to the object `obj`, after its last member without a search when
// `key` sorts after it (so an object built in key order costs no lookups; any order is still
// right). A key `obj` has already keeps its value. REQUIRES: obj is an object.
void AppendMember(Json& obj, std::string_view key, Json value);
// A copy of `obj` holding only the values at `paths` that it has ({{"metadata", "labels"},
// {"spec", "nodeName"}}), under the same keys: what a long-lived cache keeps of an object it
// reads a few fields of, instead of the whole object.
Json Projection(const Json& obj,
                std::initializer_list<std::initializer_list<std::string_view>> paths);
// The body of a /status write of `object`: its identity (apiVersion, kind, metadata's name,
// namespace, uid and resourceVersion, the write's preconditions) and `status`, which is all the
// API server takes from it; the rest of the object need not be copied.
Json StatusWriteBody(const Json& object, Json status);
// The entry of status.conditions of `type` whose status is "True", or nullptr.
const Json* TrueCondition(const Json& object, std::string_view type);

}  // namespace pjemu::api
