// Store::Impl (private to emulator/store): the maps, the resourceVersion counter and the watch hub
// behind the public Store, split over store.cc (create, read, watch), store_update.cc (update,
// patch) and store_delete.cc (delete, finalizers, garbage collection, namespaces).
// Thread safety: every member below is guarded by `mu` and every *Locked / internal method
// REQUIRES it held; Locked() takes it and notifies touched watches after releasing it.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "emulator/common/random.h"
#include "emulator/store/slot.h"
#include "emulator/store/store.h"
#include "emulator/store/watch_hub.h"

namespace pjemu::store {

using Key = std::pair<std::string, std::string>;  // namespace ("" when cluster-scoped), name
using TypeRef = const api::ResourceType*;         // always an entry of api::AllResources()
using Objects = std::map<Key, SlotPtr>;           // one type's objects, by key
// A stored object's key and slot, as the indexes name it: its address stays while the object is
// stored (a map's node), so an index holds one pointer rather than a copy of the key.
using Entry = Objects::value_type;
// The objects' order (by key), as lists return them.
struct EntryOrder {
  bool operator()(const Entry* a, const Entry* b) const { return a->first < b->first; }
};
// An index's set of entries, hashed by address: adding one of 30,000 pods to the set of a
// label they all carry is not a walk down a tree of keys. Its iteration order is the addresses',
// which differ from run to run: whatever depends on the order sorts by EntryOrder first.
using EntryBag = std::unordered_set<const Entry*>;
using TypedEntry = std::pair<TypeRef, const Entry*>;
// By type (its table address), then key.
struct TypedEntryOrder {
  bool operator()(const TypedEntry& a, const TypedEntry& b) const {
    return a.first != b.first ? std::less<TypeRef>()(a.first, b.first)
                              : a.second->first < b.second->first;
  }
};

class Store::Impl {
 public:
  Impl(const Clock& clock, StoreOptions options);
  ~Impl() { sweeper.Stop(); }  // before the slots go: its thread installs into them

  // Runs f() under mu, then (unlocked) runs the notify callbacks of the watches it touched.
  template <typename F>
  auto Locked(F&& f) {
    std::vector<std::shared_ptr<WatchStream>> touched;
    auto result = [&] {
      std::lock_guard<std::mutex> lock(mu);
      auto r = f();
      // Durable before anyone sees it; a failed commit undoes the request and is its answer.
      if (Status s = CommitPending(); !s.ok()) {
        if constexpr (std::is_constructible_v<decltype(r), Status>) r = std::move(s);
      }
      touched = hub.TakeTouched();
      return r;
    }();
    for (const auto& w : touched) w->Notify();
    return result;
  }

  // The table entry for `type`; nullptr for a type the store does not serve.
  static TypeRef Canonical(const api::ResourceType& type);

  // store.cc
  // `managed`: the object's managedFields are already computed (apply), else recorded here.
  Result<ObjectPtr> CreateLocked(TypeRef type, std::string_view ns, Json object,
                                 const api::WriteOptions& options, bool managed = false);
  Result<Json> ListLocked(TypeRef type, std::string_view ns, const api::ListOptions& options) const;
  // The snapshots a list with `options` returns, in list order.
  Result<std::vector<ObjectPtr>> SelectLocked(TypeRef type, std::string_view ns,
                                              const api::ListOptions& options,
                                              Form form = Form::kServed) const;
  // The <Kind>List object of `items` at `list_rv` (copies them).
  static Json ListJson(TypeRef type, std::uint64_t list_rv, const std::vector<ObjectPtr>& items);
  Result<std::shared_ptr<api::Watch>> WatchLocked(TypeRef type, std::string_view ns,
                                                  const api::WatchOptions& options, Form form);
  // The stored version of `key` as `form` reads it (Slot::Served or Slot::Tree); null if none.
  ObjectPtr Find(TypeRef type, const Key& key, Form form = Form::kServed) const;
  // Commits `object` as the new state: next RV, maps, history and watches. Returns the snapshot.
  // `deferred`: the version is stored without managedFields, computed later as this write's
  // (Form::kInProcess); `old` is then the version it was written over.
  ObjectPtr Put(TypeRef type, Json object, api::WatchEvent::Type event, ObjectPtr old,
                const api::ManagedWrite* deferred = nullptr);
  // Queues a committed change for CommitPending (with what to undo should the commit fail).
  void Record(TypeRef type, const Key& key, api::WatchEvent::Type event, SlotPtr object,
              SlotPtr old, SlotPtr slot_before);
  // Commits the queued changes through options.durability, then records them in the hub; on
  // failure restores the maps and rv as they were before the request.
  Status CommitPending();
  // Loads a persisted snapshot into the empty maps (constructor).
  void Restore(const Snapshot& snapshot);
  // Moves `entry`'s places in the GC and label indexes from `before` to `after` (either may be
  // null). REQUIRES: `entry` is stored (in `objects`) throughout.
  void Reindex(TypeRef type, const Entry& entry, const Json* before, const Json* after);
  // The objects of `type` whose label `label` equals `value` (nullptr: none).
  const EntryBag* WithLabel(TypeRef type, const std::string& label, const std::string& value) const;
  // Checks the namespace and apiVersion/kind of an incoming body against the request.
  Status CheckBody(TypeRef type, std::string_view ns, Json& object) const;
  // The type's own admission (api::ResourceType::admission): defaulting, then validation.
  // `old` is the stored object on update, nullptr on create.
  static Status Admit(TypeRef type, Json& object, const Json* old,
                      const api::WriteOptions& options);

  // store_update.cc
  // Whether a write in `form` may leave its managedFields to be computed later (store.h, Form):
  // an in-process actor's, not a dry run, and nothing durable (its body must send none too).
  bool MayDefer(Form form, const api::WriteOptions& options) const;
  Result<ObjectPtr> UpdateLocked(TypeRef type, std::string_view ns, Json object,
                                 api::Subresource sub, const api::WriteOptions& options,
                                 Form form = Form::kServed);
  Result<ObjectPtr> PatchLocked(TypeRef type, std::string_view ns, std::string_view name,
                                api::PatchType patch_type, const Json& patch, api::Subresource sub,
                                const api::WriteOptions& options, Form form = Form::kServed);
  // The rules every update follows (PUT and PATCH): RV and uid preconditions, subresource
  // scoping, immutable system fields, finalizers while deleting, generation, admission, no-op.
  // `defer`: the write may leave its managedFields to be computed later (Form::kInProcess; `old`
  // is then the version as that form reads it).
  Result<ObjectPtr> ApplyUpdate(TypeRef type, const ObjectPtr& old, Json incoming,
                                api::Subresource sub, const api::WriteOptions& options,
                                bool managed = false, bool defer = false);
  Result<ObjectPtr> BindLocked(std::string_view ns, std::string_view name,
                               const api::PodBinding& binding, bool dry_run);
  // Server-side apply (Store::Apply).
  Result<ObjectPtr> ServerSideApplyLocked(TypeRef type, std::string_view ns, std::string_view name,
                                          const Json& config, api::Subresource sub,
                                          const api::WriteOptions& options, bool* created);

  // store_delete.cc
  Result<Json> DeleteLocked(TypeRef type, std::string_view ns, std::string_view name,
                            const api::DeleteOptions& options);
  // Deletes a present object: graceful pods, propagation finalizers, finalizers, or removal.
  Result<Json> DeleteObject(TypeRef type, const ObjectPtr& object,
                            const api::DeleteOptions& options);
  // Removes the object for good (DELETED at a new RV, carrying `final_state` when given, else
  // the stored state), then collects its garbage. Returns the DELETED object.
  Json Remove(TypeRef type, const Key& key, Json final_state = nullptr);
  // Orphan propagation: strips the ownerReferences to `uid` from each dependent (one MODIFIED
  // each) instead of deleting them.
  void OrphanDependents(const std::string& uid,
                        const std::vector<std::pair<TypeRef, Key>>& dependents);
  // Objects that name `uid` in their ownerReferences.
  std::vector<std::pair<TypeRef, Key>> DependentsOf(const std::string& uid) const;
  // True when a write must remove the object: deletionTimestamp set, no finalizers left and no
  // grace period running.
  static bool ShouldRemove(const Json& object);

  const Clock& clock;
  const StoreOptions options;
  Random random;
  mutable std::mutex mu;
  std::uint64_t rv = 0;
  // Packs the versions no reader holds (slot.h); before `objects` and `hub`, which hold slots.
  SlotSweeper sweeper;
  std::map<std::string, Objects> objects;  // by ResourceType::PluralGroup()
  // The indexes below name stored entries (an entry leaves them before it leaves `objects`).
  std::unordered_map<std::string, TypedEntry> by_uid;
  // Indexes for garbage collection: owner uid -> dependents; involvedObject.uid -> Events.
  std::unordered_map<std::string, std::set<TypedEntry, TypedEntryOrder>> dependents;
  std::unordered_map<std::string, EntryBag> events_about;
  // Label index for lists with an equality selector (the controller's and kubelet's lists by
  // job-name label): PluralGroup() -> "key\nvalue" -> objects, in the maps' order. Without it
  // every such list would scan every object of the type: O(jobs^2) over a run.
  std::unordered_map<std::string, std::unordered_map<std::string, EntryBag>> by_label;
  WatchHub hub;
  // The running request's changes, not yet durable nor visible to watches.
  struct Undo {
    TypeRef type;
    Key key;
    SlotPtr before;  // the map's entry before (null: absent)
    SlotPtr after;   // null: removed
  };
  std::vector<Change> pending;
  std::vector<std::pair<SlotPtr, SlotPtr>> pending_slots;  // pending's object and old
  std::vector<Undo> undo;
  std::uint64_t rv_before_pending = 0;

 private:
  void CollectGarbage(TypeRef type, const Json& removed);
  void FinishForegroundOwners(const Json& removed);
  Result<Json> DeleteNamespace(const ObjectPtr& ns, const api::DeleteOptions& options);
  // namespace_lifecycle.cc (StoreOptions::namespace_lifecycle): create's refusal in a
  // Terminating namespace, the `kubernetes` finalizer on new namespaces, and DELETE marking a
  // namespace Terminating (or removing it once its finalizers are gone).
  Status RefuseInTerminating(TypeRef type, const std::string& ns, const std::string& name) const;
  void AddNamespaceFinalizer(TypeRef type, Json& object) const;
  // A Service's spec.clusterIP (service_ip.h) against the stored Services; ok for other types.
  Status ClusterIpLocked(TypeRef type, Json& object, const Json* old) const;
  std::optional<Result<Json>> TerminateNamespace(const ObjectPtr& ns,
                                                 const api::DeleteOptions& options);
};

}  // namespace pjemu::store
