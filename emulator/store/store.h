// Store: the API server's object store, the heart of the emulator. Every object lives here as
// JSON in wire form, so every field a user sends round-trips exactly; typed views are decoded
// from it by the components that need logic. A version no reader holds any more is kept packed
// (compressed MessagePack, slot.h) once StoreOptions::pack_after_writes writes have passed, and
// decoded again when read: what is at rest costs its bytes, not a JSON tree. Writers: the API
// server (HTTP), LocalClient (in-process actors). Readers: the same, plus watches that stream
// every change.
//
// Semantics (kube-apiserver's):
//  - One global resourceVersion counter shared by all kinds (etcd's revision); uid,
//    creationTimestamp (from the Clock), generation=1, generateName, namespace defaulting.
//  - metadata.managedFields on every create, update, patch and apply (api/managed_fields.h):
//    the manager is WriteOptions::field_manager; /status writes have entries of their own.
//    Every object the store hands out (reads, write results, watch events) carries them in
//    their stored form, each fieldsV1 as its compact text (api::CompactManagedFields): the
//    in-process actors never read them, and expanding them for every read was a third of the
//    control plane's instructions. api::ExpandManagedFields gives the wire form; the API
//    server's serializer (apiserver/object_texts.h) applies it to everything it sends.
//    Updates and patches by in-process actors (Form::kInProcess) leave them to be computed when
//    something needs them: see Form.
//  - Update/Patch with optimistic concurrency; spec writes bump generation and never touch
//    .status; status-subresource writes touch only .status.
//  - Admission: creates and main-resource updates pass the type's own admission from the
//    resource table (api::ResourceType::admission; for PyTorchJobs the operator's validating
//    webhook) after the metadata checks; its refusal is the write's error.
//  - Delete with finalizers (deletionTimestamp), ownerReference garbage collection
//    (Background, Foreground, Orphan) and graceful deletion of pods bound to a node.
//  - Watch from a resourceVersion with a bounded history (kExpired past it); BOOKMARKs on request.
//  - Namespaces default, kube-system, kube-public and kubeflow exist from the start; creating in a
//    missing namespace is kNotFound; deleting a namespace deletes what is in it.
//
// Pods: graceful deletion as kube-apiserver. DELETE on a pod with spec.nodeName set, not in phase
// Succeeded/Failed, with grace > 0 (DeleteOptions::grace_period_seconds, else
// spec.terminationGracePeriodSeconds, else 30) only sets metadata.deletionTimestamp = now + grace
// and metadata.deletionGracePeriodSeconds = grace (one MODIFIED); a later DELETE with a shorter
// grace shortens it, a longer one changes nothing. The pod goes (DELETED) when deleted with grace 0
// (the kubelet does so once its processes are gone). Unbound or terminal pods go at once.
// BOOKMARKs are sent only when the API server calls SendBookmarks() (see there).
//
// Known deviations from kube-apiserver (also listed in the README):
//  - Garbage collection runs synchronously inside the owner's Delete call (the real GC is an
//    asynchronous controller); the dependents' DELETED events follow the owner's. Orphan
//    strips the dependents' ownerReferences at once instead of via the `orphan` finalizer.
//    Foreground deletion waits for every dependent, not only those with blockOwnerDeletion.
//  - Deleting an object also deletes the core/v1 Events whose involvedObject.uid is that object
//    (real Events expire after a TTL instead).
//  - Without StoreOptions::namespace_lifecycle (a store with no namespace controller), namespace
//    deletion removes the contents at once (ignoring their finalizers and grace periods)
//    instead of passing through Terminating.
//  - Strategic merge patch on core kinds is applied as a JSON merge patch (lists are replaced,
//    not merged by key; no $patch directives). Custom resources get 415, as the real server.
//  - generation is bumped when .spec changes, for every kind (and on deletionTimestamp).
//  - No defaulting of pod/service specs; create only resets .status (pods {phase: Pending},
//    namespaces {phase: Active}, nodes keep theirs). The /scale subresource is the API server's.
//  - A watch that leaves a label/field selector gets DELETED with its last matching state at the
//    new RV; one that enters gets ADDED (the watch cache's behaviour).
//  - A watch from an RV newer than the store's is 504 Timeout at once (the real server waits 3s).
//  - PUT without metadata.resourceVersion is unconditional for every kind; the real server
//    refuses it for custom resources (422 "metadata.resourceVersion: ... must be specified for
//    an update").

// Thread safety: every method is safe to call from any thread; one mutex guards the maps.
// Watch notifications run on the writer's thread after the lock is released, so writers never
// wait for watchers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/pod_binding.h"
#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/durability.h"

namespace pjemu::store {

struct StoreOptions {
  std::size_t watch_history = 20000;  // events kept for watches that resume from an RV
  std::size_t watch_queue_limit =
      20000;                       // events a slow watcher may fall behind before it is ended
  std::uint64_t seed = 1;          // uids and generateName suffixes are drawn from it
  // Versions no reader holds are kept packed (compressed MessagePack) once they have not been
  // written or read for this many writes and reads, and decoded again when read (slot.h);
  // 0 = never.
  std::size_t pack_after_writes = 1024;
  bool default_namespaces = true;  // create default, kube-system, kube-public, kubeflow
  // Namespaces as kube-apiserver keeps them for the namespace controller: created with
  // spec.finalizers [kubernetes]; DELETE marks one Terminating (deletionTimestamp,
  // status.phase) and it goes once that finalizer is removed and it is deleted again; creates
  // in it are 403 `unable to create new content in namespace X because it is being terminated`.
  // false = deleting a namespace deletes its content and the namespace at once (no controller).
  bool namespace_lifecycle = false;
  // Persistence (emulator/persist): every write is committed through `durability` before it is
  // published or acknowledged; `restore` (when non-null and rv > 0) is loaded instead of the
  // default namespaces. Both must outlive the Store. nullptr = in memory only.
  Durability* durability = nullptr;
  const Snapshot* restore = nullptr;
};

// An immutable stored object: one resourceVersion of it, shared by the store, its watch events
// and every reader holding it; never changed after it was stored.
using ObjectPtr = std::shared_ptr<const Json>;

// Who reads and writes: the API server and everything that serves what it reads (kServed, the
// default), or the in-process actors (kInProcess), which never read managedFields. An update or
// patch with kInProcess, by a client that sent no managedFields of its own, stores the version
// without them and records how to compute them (the write's manager, subresource and time, and
// the version it was written over). The packing thread computes them before it packs the version
// (slot.h); they are computed at once, the chain of such versions before first, when a kServed
// read, watch or write, an apply or a deletion needs that version before then, or once 16 such
// writes have stacked up on one object; either way they are what the write would have stored. A
// kInProcess read sees the versions not computed yet without managedFields. With a Durability
// nothing is deferred (what is committed is complete). Computing them was the largest single cost
// of the in-process status writes (README "Issue 40").
enum class Form { kServed, kInProcess };

// What ListShared returns: the snapshots a List would copy, and the list's resourceVersion.
struct SharedList {
  std::uint64_t resource_version = 0;
  std::vector<ObjectPtr> items;
};

class Store {
 public:
  explicit Store(const Clock& clock, StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Same contracts as client::Client (emulator/client/client.h).
  Result<Json> Create(const api::ResourceType& type, std::string_view ns, Json object,
                      const api::WriteOptions& options = {});
  Result<Json> Get(const api::ResourceType& type, std::string_view ns, std::string_view name,
                   Form form = Form::kServed) const;
  Result<Json> List(const api::ResourceType& type, std::string_view ns,
                    const api::ListOptions& options = {}, Form form = Form::kServed) const;
  // Get and List without copying: the stored snapshots themselves, for readers that only read
  // or serialize them (the API server). Same errors as Get and List.
  Result<ObjectPtr> GetShared(const api::ResourceType& type, std::string_view ns,
                              std::string_view name, Form form = Form::kServed) const;
  Result<SharedList> ListShared(const api::ResourceType& type, std::string_view ns,
                                const api::ListOptions& options = {},
                                Form form = Form::kServed) const;
  Result<Json> Update(const api::ResourceType& type, std::string_view ns, Json object,
                      api::Subresource sub = api::Subresource::kNone,
                      const api::WriteOptions& options = {}, Form form = Form::kServed);
  Result<Json> Patch(const api::ResourceType& type, std::string_view ns, std::string_view name,
                     api::PatchType patch_type, const Json& patch,
                     api::Subresource sub = api::Subresource::kNone,
                     const api::WriteOptions& options = {}, Form form = Form::kServed);
  // Create, Update and Patch answering with the stored snapshot itself (a dry run's or a no-op's
  // answer is a snapshot of its own), not a copy: for writers that only read the answer.
  Result<ObjectPtr> CreateShared(const api::ResourceType& type, std::string_view ns, Json object,
                                 const api::WriteOptions& options = {});
  Result<ObjectPtr> UpdateShared(const api::ResourceType& type, std::string_view ns, Json object,
                                 api::Subresource sub = api::Subresource::kNone,
                                 const api::WriteOptions& options = {}, Form form = Form::kServed);
  Result<ObjectPtr> PatchShared(const api::ResourceType& type, std::string_view ns,
                                std::string_view name, api::PatchType patch_type, const Json& patch,
                                api::Subresource sub = api::Subresource::kNone,
                                const api::WriteOptions& options = {}, Form form = Form::kServed);
  // The pods/binding subresource (api::BindPod): pod ns/name gets the binding's node, its
  // annotations and PodScheduled True in one write that leaves managedFields as they were.
  // kNotFound; 409 for a failed uid or resourceVersion precondition, or a pod that cannot be
  // bound (api::BindPod). A dry run answers the same and stores nothing.
  Result<ObjectPtr> BindPod(std::string_view ns, std::string_view name,
                            const api::PodBinding& binding, bool dry_run = false);
  // Server-side apply (api::ApplyObject) of `config` to the object `name`: an update, or a
  // create when there is none (main resource only; *created tells which). Same errors as Update
  // and Create, plus 409 apply conflicts (options.force takes the fields instead).
  Result<Json> Apply(const api::ResourceType& type, std::string_view ns, std::string_view name,
                     const Json& config, api::Subresource sub = api::Subresource::kNone,
                     const api::WriteOptions& options = {}, bool* created = nullptr);
  Result<Json> Delete(const api::ResourceType& type, std::string_view ns, std::string_view name,
                      const api::DeleteOptions& options = {});
  // Deletes every object matching the selectors; returns the <Kind>List of what was deleted.
  Result<Json> DeleteCollection(const api::ResourceType& type, std::string_view ns,
                                const api::ListOptions& list_options,
                                const api::DeleteOptions& options = {});
  Result<std::shared_ptr<api::Watch>> Watch(const api::ResourceType& type, std::string_view ns,
                                            const api::WatchOptions& options = {},
                                            Form form = Form::kServed);

  // Queues a BOOKMARK {kind, apiVersion, metadata: {resourceVersion: <current global RV>}} on
  // every open watch that was opened with allow_bookmarks. Every change up to that RV has been
  // queued on the watch before it, so a client may resume from it. The store sends none on its
  // own: the API server calls this periodically (kube-apiserver sends one about every minute).
  void SendBookmarks();
  // The current global resourceVersion (the last write's).
  std::uint64_t ResourceVersion() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pjemu::store
