// A job kind as data: its resource row, the children a pass reads, its pure Sync and the hooks
// the cluster runs once. One generic reconciler (kind_reconciler.h) runs every descriptor; the
// registry (emulator/kinds) lists them. A kind's admission half (defaulting, validation, field
// schema, scale paths, workload functions) is its row in api's resource table, which the API
// server reads: the API server sits below the controllers and never sees this struct.
//
// The pass every kind shares: re-read the object (NotFound or deleting: done), read its children
// (ChildType), call Sync(object, children, now), carry out the actions in order, write .status
// through the status subresource when it changed, report Sync's error before or after that write
// (ErrorOrder), and requeue after requeue_after (at least 1ns: a timed requeue on a virtual
// clock). A kind's quirks live in its Sync's action order, not in the reconciler. What a pure
// Sync cannot say because it depends on the cluster's operator flags (KindOptions) goes through
// two optional hooks: prepare (writes before the pass's actions) and decorate (each created child).
// Thread safety: descriptors are immutable statics; Sync must be pure (safe from any thread).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/object_list.h"
#include "emulator/api/resources.h"
#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::controller {

class EventRecorder;       // event_recorder.h
struct QueueIntegration;  // queue_integration.h

// One step of a pass (T9k's generic shape): an event about the object, or a write of a child.
struct Action {
  enum class Kind { kEvent, kCreate, kUpdate, kDelete };
  Kind kind = Kind::kEvent;
  const api::ResourceType* type = nullptr;  // kCreate, kUpdate, kDelete
  Json object;                              // kCreate, kUpdate (the whole object)
  std::string name;                         // kDelete; kCreate/kUpdate: the object's name
  std::string event_type;                   // kEvent: "Normal" | "Warning"
  std::string reason;                       // kEvent
  std::string message;                      // kEvent
  // kCreate: AlreadyExists counts as done (JobSet's headless Service).
  bool if_absent = false;
  // kCreate/kDelete straight through the Client: no events, not even on failure (an HPA, the
  // Jobs JobSet deletes). Otherwise through ChildWriter (its warnings, the kind's ChildEvents).
  bool quiet = false;
  // kDelete: metadata's propagationPolicy ("" the server's default, "Background").
  std::string propagation;

  static Action Event(std::string event_type, std::string reason, std::string message);
  static Action Create(const api::ResourceType& type, Json object);
  static Action Update(const api::ResourceType& type, Json object);
  static Action Delete(const api::ResourceType& type, std::string name);
  bool Is(Kind k, const api::ResourceType& t) const { return kind == k && type && *type == t; }
};

// When the pass reports Sync::error: before the status write (the Training Operator's
// ReconcileJobs returns before UpdateJobStatus) or after it (T9k writes its status first).
enum class ErrorOrder { kBeforeStatus, kAfterStatus };

// What one pass decides: every kind's pure Sync returns this.
struct Sync {
  Json status;                            // the new .status
  bool status_changed = false;            // write it through the status subresource
  std::vector<Action> actions;            // in the upstream controller's order
  std::optional<Duration> requeue_after;  // nullopt: only on watch events
  Status error;                           // reported after the actions, retried with backoff
  ErrorOrder error_order = ErrorOrder::kAfterStatus;
};

// The objects a pass read, by type, as shared snapshots (in process the store's own: a pass
// copies none of them).
class Children {
 public:
  // Every object read of `type` (empty when none).
  const api::ObjectList& Of(const api::ResourceType& type) const;
  // The first of them, or nullptr.
  const Json* One(const api::ResourceType& type) const;
  void Add(const api::ResourceType& type, api::ObjectList::Ptr object);
  void Ensure(const api::ResourceType& type);

 private:
  std::map<std::string, api::ObjectList> by_type_;  // by PluralGroup()
};

// A type whose objects a pass reads: how it is watched and which objects of it are read.
struct ChildType {
  enum class Read {
    kListControlled,    // List by Which(object) (a label selector; "" reads none), keep controlled
    kByName,            // Get the object named Which(object) ("" reads none), whoever owns it
    kByNameControlled,  // likewise, kept only when the object controls it
  };
  const api::ResourceType& (*type)();  // its row (api::Pods, ...)
  Read read = Read::kListControlled;
  std::string (*which)(const Json& object) = nullptr;
  // The watch that wakes the owner (owners found through the controller ownerReference);
  // watched false: read each pass but not watched (a runtime, an HPA).
  bool watched = true;
  std::string watch_selector;  // narrows the watch ("" every object of the type)
};

// How child writes are announced with events, as the upstream controllers differ.
enum class ChildEvents {
  kNone,  // no Successful* events (JobSet, TrainJob, T9k)
  // Kubeflow's common job controller: SuccessfulCreatePod "Created pod: x" and
  // SuccessfulDeletePod; the job's own TTL deletion as SuccessfulDeletePod "Deleted job: x".
  kKubeflow,
  // kube-controller-manager: SuccessfulCreate "Created pod: x", SuccessfulDelete "Deleted pod: x".
  kKubeControllerManager,
};

// The cluster's settings for the kinds' optional hooks: the operators' command-line flags, one
// set per cluster, handed to every kind (a kind without hooks ignores them).
struct KindOptions {
  // The Training Operator's --gang-scheduler-name ("" or "None": no gang scheduling).
  std::string gang_scheduler_name;
};

struct KindDescriptor {
  const api::ResourceType& (*type)();  // the kind's resource row (api::Jobs, ...)
  const char* controller_name;         // its events' source.component
  std::vector<ChildType> children;
  // One pass, pure. REQUIRES: `object` is the stored object (not deleting); children as read.
  Sync (*sync)(const Json& object, const Children& children, Time now);
  ChildEvents child_events = ChildEvents::kNone;
  // What the kind's manifests install with it (TrainJob's default runtime); run once when the
  // cluster starts, before any controller. nullptr: nothing. Errors: the Client's.
  Status (*install)(client::Client& client) = nullptr;
  // Optional: run each pass after the children are read and before Sync's actions, with the
  // Client, the kind's event recorder and the cluster's options (the Training Operator syncs a
  // gang's PodGroup before its pods). Its error ends the pass (retried with backoff).
  // nullptr: nothing.
  Status (*prepare)(client::Client& client, EventRecorder& recorder, const Json& object,
                    const KindOptions& options) = nullptr;
  // Optional: each object a kCreate action writes, rewritten just before it is written (a gang's
  // schedulerName and group label on pods); it may record events about `object`. nullptr: as
  // Sync made it.
  Json (*decorate)(Json child, const api::ResourceType& type, const Json& object,
                   const KindOptions& options, EventRecorder& recorder) = nullptr;
  // Kueue's integration of the kind (emulator/kueue runs it); nullptr when Kueue has none.
  const QueueIntegration* queue = nullptr;
};

}  // namespace pjemu::controller
