// metadata.managedFields as kube-apiserver keeps them (its fieldmanager package), over the
// structured merge of structured_merge.h:
//  - every create, update and patch records what it changed under its manager with operation
//    Update (one entry per manager, operation and subresource; the entry's time moves when the
//    write changed fields; others lose the fields it changed or removed);
//  - server-side apply (ApplyObject) merges the applied configuration, makes the applier own
//    exactly the fields it sets, removes the fields it stopped setting that no one else owns,
//    and refuses (409, kube-apiserver's message and causes) to change others' fields without
//    force, which moves them to the applier;
//  - writes of /status record under an entry with subresource "status" and see only .status;
//    main-resource writes of types with a status never own it.
// The fields every manager's set leaves out are kube-apiserver's: apiVersion, kind, and
// metadata's name, namespace, uid, resourceVersion, generation, creationTimestamp, selfLink,
// managedFields (and the deletion fields the server sets). Entries are sorted as it sorts them.
// Thread safety: pure functions over values.
#pragma once

#include <string>
#include <string_view>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::api {

struct ManagedWrite {
  std::string manager;  // fieldManager, or the user agent's prefix (ManagerFromUserAgent)
  Subresource subresource = Subresource::kNone;
  std::string now;  // RFC 3339, the entry's time
  // UpdateManagedFields writes the entries it adds or rewrites in the stored form (fieldsV1 as
  // compact text, CompactManagedFields) rather than as trees: the store's writes.
  bool stored_form = false;
};

// Sets next's metadata.managedFields after a create (live == nullptr), update or patch of the
// object from `live` to `next`. Managed fields the client sent in `next` that differ from the
// live ones replace them first (how kubectl's client-side-apply migration rewrites them),
// unless this is a subresource write.
void UpdateManagedFields(const ResourceType& type, const Json* live, Json& next,
                         const ManagedWrite& write);

// The managedFields (stored form; null for none) that UpdateManagedFields sets on `next` after
// an update of `live` to `next` that sent none, where `live_managed` are live's (null: none),
// whether or not `live` holds them itself, and `next` holds none: for a store that keeps a
// version's managedFields apart from it, without copying either version.
Json ManagedFieldsAfterUpdate(const ResourceType& type, const Json& live, const Json& live_managed,
                              const Json& next, const ManagedWrite& write);

// Server-side apply of `config` (the request body, metadata.name set) onto `live` (nullptr:
// create-on-apply). Returns the object to store, with its managedFields. Errors: 400 when the
// configuration carries managedFields, 422 when a keyed list's item lacks its keys or repeats
// them, 409 Conflict (details.causes: {type FieldManagerConflict, message, field} per path)
// when it would change fields other managers own and !force. The manager "kubectl" also takes
// over the fields its last-applied-configuration annotation names from client-side apply, and
// keeps that annotation in step, as kube-apiserver does for kubectl.
Result<Json> ApplyObject(const ResourceType& type, const Json* live, const Json& config,
                         const ManagedWrite& write, bool force);

// The manager of a request without fieldManager: the User-Agent up to its first '/'
// ("kubectl/v1.33.1 (linux/amd64) ..." -> "kubectl"), as kube-apiserver derives it.
std::string ManagerFromUserAgent(std::string_view user_agent);

// The stored form of managedFields (the store's, emulator/store): each entry's fieldsV1 kept as
// its compact JSON text in a string, as kube-apiserver keeps FieldsV1.Raw as bytes: as a JSON
// tree (a map node per key) they were 45 % of the heap at 1000 virtual jobs, every stored
// version holding its own copy (README "Issue 40"). Compact turns the fieldsV1 objects of
// `object` (or of each item of a list) into strings, Expand turns such strings back into
// objects (the wire form: the API server's serializer applies it to all it sends; the store
// hands out the stored form); both leave other values as they are and are idempotent.
// Everything in this header accepts either form.
void CompactManagedFields(Json& object);
void ExpandManagedFields(Json& object);
// True when a and b are the same managedFields, whatever the form of each.
bool SameManagedFields(const Json& a, const Json& b);
// A copy of `object` without its metadata.managedFields (not copied at all), and without its
// top-level member `skip` when one is named (an empty `skip` names none): for a reader that
// computes from the object and never reads them (a controller's defaulted copy of its job), and for
// a write whose managed fields UpdateManagedFields sets anew (the store's /status write).
Json CopyWithoutManagedFields(const Json& object, std::string_view skip = {});

inline constexpr const char* kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";

}  // namespace pjemu::api
