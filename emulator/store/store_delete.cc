// Delete: graceful pod deletion, propagation policies, finalizers, ownerReference garbage
// collection (synchronous, see the deviations in store.h) and namespace deletion.
#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/store/object_meta.h"
#include "emulator/store/store_impl.h"

namespace pjemu::store {
namespace {

using api::WatchEvent;

constexpr char kForeground[] = "foregroundDeletion";

std::int64_t IntAt(const Json& object, const char* a, const char* b, std::int64_t fallback) {
  if (!object.contains(a) || !object[a].is_object()) return fallback;
  const Json& inner = object[a];
  auto it = inner.find(b);
  return it != inner.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

bool IsDeleting(const Json& object) {
  return object.contains("metadata") && object["metadata"].contains("deletionTimestamp");
}

}  // namespace

bool Store::Impl::ShouldRemove(const Json& object) {
  // A Terminating namespace waits for its spec.finalizers too (namespace_lifecycle.cc).
  const Json& spec_finalizers = api::Field(api::Field(object, "spec"), "finalizers");
  if (api::Str(object, "kind") == "Namespace" && spec_finalizers.is_array() &&
      !spec_finalizers.empty()) {
    return false;
  }
  return IsDeleting(object) && Finalizers(object).empty() &&
         IntAt(object, "metadata", "deletionGracePeriodSeconds", 0) == 0;
}

Result<Json> Store::Impl::DeleteLocked(TypeRef type, std::string_view ns, std::string_view name,
                                       const api::DeleteOptions& options) {
  const std::string& policy = options.propagation_policy;
  if (!policy.empty() && policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return Status(Code::kInvalid,
                  "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported "
                  "value: \"" +
                      policy +
                      "\": supported values: \"Foreground\", \"Background\", "
                      "\"Orphan\", \"nil\"");
  }
  Key key{type->namespaced ? std::string(ns) : "", std::string(name)};
  ObjectPtr object = Find(type, key);
  if (!object) return NotFoundError(type->PluralGroup(), key.second);
  if (options.precondition_uid && *options.precondition_uid != MetaString(*object, "uid")) {
    return PreconditionFailedError(type->PluralGroup(), key.second, "UID",
                                   *options.precondition_uid, MetaString(*object, "uid"));
  }
  if (options.precondition_resource_version &&
      *options.precondition_resource_version != MetaString(*object, "resourceVersion")) {
    return PreconditionFailedError(type->PluralGroup(), key.second, "ResourceVersion",
                                   *options.precondition_resource_version,
                                   MetaString(*object, "resourceVersion"));
  }
  if (type == &api::Namespaces()) return DeleteNamespace(object, options);
  return DeleteObject(type, object, options);
}

Result<Json> Store::Impl::DeleteObject(TypeRef type, const ObjectPtr& current,
                                       const api::DeleteOptions& options) {
  Json object = *current;
  Key key{MetaString(object, "namespace"), MetaString(object, "name")};
  std::string uid = MetaString(object, "uid");
  auto mark_deleting = [&](std::int64_t grace) {
    bool first = !IsDeleting(object);
    Json& meta = MutableMeta(object);
    meta["deletionTimestamp"] = FormatTime(clock.Now() + std::chrono::seconds(grace));
    meta["deletionGracePeriodSeconds"] = grace;
    if (first && meta.value("generation", 0) > 0) {
      meta["generation"] = meta["generation"].get<int>() + 1;
    }
  };

  // Graceful deletion of a pod the kubelet may be running: it keeps running until the kubelet
  // has stopped it and deletes it again with grace 0.
  if (type == &api::Pods()) {
    std::int64_t grace = options.grace_period_seconds
                             ? *options.grace_period_seconds
                             : IntAt(object, "spec", "terminationGracePeriodSeconds", 30);
    if (grace < 0) grace = 1;
    if (api::Str(api::Field(object, "spec"), "nodeName").empty() || api::IsPodTerminal(object)) {
      grace = 0;
    }
    if (grace > 0) {
      if (IsDeleting(object) &&
          IntAt(object, "metadata", "deletionGracePeriodSeconds", 0) <= grace) {
        return object;  // already terminating, no later than this request asks
      }
      mark_deleting(grace);
      if (options.dry_run) return object;
      return *Put(type, std::move(object), WatchEvent::Type::kModified, current);
    }
  }

  auto dependents = DependentsOf(uid);
  if (options.propagation_policy == "Orphan" && !options.dry_run) {
    OrphanDependents(uid, dependents);
    dependents.clear();
  }

  if (options.propagation_policy == "Foreground" && !dependents.empty()) {
    if (!HasFinalizer(object, kForeground)) {
      auto f = Finalizers(object);
      f.push_back(kForeground);
      SetFinalizers(object, f);
    }
    if (!IsDeleting(object)) mark_deleting(0);
    if (options.dry_run) return object;
    ObjectPtr owner = Put(type, std::move(object), WatchEvent::Type::kModified, current);
    api::DeleteOptions cascade;
    cascade.propagation_policy = "Foreground";
    for (const auto& [t, k] : dependents) {
      if (ObjectPtr d = Find(t, k); d && !IsDeleting(*d)) (void)DeleteObject(t, d, cascade);
    }
    // The owner goes (FinishForegroundOwners) once the last dependent has gone.
    return *owner;
  }

  if (!Finalizers(object).empty()) {
    // Already waiting for its finalizers; a pod's running grace period ends now.
    if (IsDeleting(object) && IntAt(object, "metadata", "deletionGracePeriodSeconds", 0) == 0) {
      return object;
    }
    mark_deleting(0);
    if (options.dry_run) return object;
    return *Put(type, std::move(object), WatchEvent::Type::kModified, current);
  }
  if (options.dry_run) return object;
  return Remove(type, key);
}

void Store::Impl::OrphanDependents(const std::string& uid,
                                   const std::vector<std::pair<TypeRef, Key>>& dependents) {
  for (const auto& [t, k] : dependents) {
    ObjectPtr d = Find(t, k);
    if (!d) continue;
    Json next = *d;
    Json kept = Json::array();
    for (const auto& ref : next["metadata"]["ownerReferences"]) {
      if (ref.value("uid", "") != uid) kept.push_back(ref);
    }
    if (kept.empty()) {
      next["metadata"].erase("ownerReferences");
    } else {
      next["metadata"]["ownerReferences"] = kept;
    }
    Put(t, std::move(next), WatchEvent::Type::kModified, d);
  }
}

Json Store::Impl::Remove(TypeRef type, const Key& key, Json final_state) {
  auto& by_key = objects[type->PluralGroup()];
  auto it = by_key.find(key);
  if (it == by_key.end()) return nullptr;
  SlotPtr last_slot = it->second;
  ObjectPtr last = last_slot->Served();  // the DELETED event carries it as served
  Json removed = final_state.is_null() ? *last : std::move(final_state);
  Reindex(type, *it, last.get(), nullptr);
  by_key.erase(it);
  by_uid.erase(MetaString(removed, "uid"));
  ++rv;
  MutableMeta(removed)["resourceVersion"] = std::to_string(rv);
  api::CompactManagedFields(removed);
  Record(type, key, WatchEvent::Type::kDeleted, sweeper.Make(std::make_shared<const Json>(removed)),
         last_slot, last_slot);
  CollectGarbage(type, removed);
  return removed;
}

std::vector<std::pair<TypeRef, Key>> Store::Impl::DependentsOf(const std::string& uid) const {
  auto it = dependents.find(uid);
  if (it == dependents.end()) return {};
  std::vector<std::pair<TypeRef, Key>> out;
  out.reserve(it->second.size());
  for (const auto& [type, entry] : it->second) out.emplace_back(type, entry->first);
  return out;
}

void Store::Impl::CollectGarbage(TypeRef type, const Json& removed) {
  std::string uid = MetaString(removed, "uid");
  if (uid.empty()) return;
  // Dependents: those with another live owner only lose the dangling references; the others
  // are deleted with the default (background) policy, recursively.
  for (const auto& [t, k] : DependentsOf(uid)) {
    ObjectPtr d = Find(t, k);
    if (!d) continue;
    Json kept = Json::array();
    for (const auto& ref : (*d)["metadata"]["ownerReferences"]) {
      if (by_uid.count(ref.value("uid", ""))) kept.push_back(ref);
    }
    if (kept.empty()) {
      (void)DeleteObject(t, d, {});
    } else {
      Json next = *d;
      next["metadata"]["ownerReferences"] = std::move(kept);
      Put(t, std::move(next), WatchEvent::Type::kModified, d);
    }
  }
  // Events about the removed object (a deviation: real Events expire after a TTL instead).
  if (type != &api::Events()) {
    if (auto it = events_about.find(uid); it != events_about.end()) {
      std::vector<Key> events;  // removed in key order
      for (const Entry* entry : it->second) events.push_back(entry->first);
      std::sort(events.begin(), events.end());
      for (const auto& key : events) Remove(&api::Events(), key);
    }
  }
  FinishForegroundOwners(removed);
}

void Store::Impl::FinishForegroundOwners(const Json& removed) {
  const Json& meta = removed["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return;
  for (const auto& ref : meta["ownerReferences"]) {
    std::string owner_uid = ref.is_object() ? ref.value("uid", "") : "";
    auto it = by_uid.find(owner_uid);
    if (it == by_uid.end()) continue;
    const TypeRef t = it->second.first;
    const Key k = it->second.second->first;  // a copy: Remove below erases the entry
    ObjectPtr owner = it->second.second->second->Served();  // as Find(t, k) reads it
    if (!owner || !IsDeleting(*owner) || !HasFinalizer(*owner, kForeground)) continue;
    if (!DependentsOf(owner_uid).empty()) continue;
    Json next = *owner;
    auto f = Finalizers(next);
    f.erase(std::find(f.begin(), f.end(), kForeground));
    SetFinalizers(next, f);
    if (ShouldRemove(next)) {
      Remove(t, k, std::move(next));
    } else {
      Put(t, std::move(next), WatchEvent::Type::kModified, owner);
    }
  }
}

Result<Json> Store::Impl::DeleteNamespace(const ObjectPtr& ns, const api::DeleteOptions& options) {
  std::string name = MetaString(*ns, "name");
  if (name == "default" || name == "kube-system" || name == "kube-public") {
    return Status(Code::kForbidden,
                  "namespaces \"" + name + "\" is forbidden: this namespace may not be deleted",
                  Json{{"name", name}, {"kind", "namespaces"}});
  }
  if (auto terminating = TerminateNamespace(ns, options)) return std::move(*terminating);
  if (options.dry_run) return *ns;
  // Everything in it goes at once (a deviation: no Terminating phase, finalizers ignored).
  for (const auto& type : api::AllResources()) {
    if (!type.namespaced) continue;
    auto t = objects.find(type.PluralGroup());
    if (t == objects.end()) continue;
    std::vector<Key> keys;
    for (const auto& [key, obj] : t->second) {
      if (key.first == name) keys.push_back(key);
    }
    for (const auto& key : keys) Remove(&type, key);
  }
  return Remove(&api::Namespaces(), {"", name});
}

}  // namespace pjemu::store
