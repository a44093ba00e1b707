// The request vocabulary shared by the store, the clients and the API server: options of list,
// watch, write and delete calls, patch types, watch events and the Watch stream interface.
// Objects are nlohmann::json in their wire form (apiVersion, kind, metadata, spec, status).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

struct ListOptions {
  std::string label_selector;  // Kubernetes syntax; a parse error is kBadRequest
  std::string field_selector;  // metadata.name, metadata.namespace, and per-kind fields
};

struct WatchOptions : ListOptions {
  // "" or "0": a synthetic ADDED for every matching object first, then changes.
  // "N": every change after N, in order; kExpired when N is older than the kept history.
  std::string resource_version;
  bool allow_bookmarks = false;
};

struct WriteOptions {
  bool dry_run = false;  // validate and answer as if written, store nothing
  // The write's manager in metadata.managedFields (managed_fields.h): the request's
  // fieldManager, else its User-Agent's prefix; "" for in-process writers without one.
  std::string field_manager;
  bool force = false;  // server-side apply: take fields other managers own instead of a 409
  // Admission warnings for the caller (the API server sends them as Warning headers).
  std::vector<std::string>* warnings = nullptr;
};

struct DeleteOptions {
  // "Background" (default for most kinds), "Foreground" or "Orphan".
  std::string propagation_policy;
  // Pods: seconds of graceful termination; unset means the pod's terminationGracePeriodSeconds.
  std::optional<std::int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json: 415 for custom resources
};

enum class Subresource { kNone, kStatus, kScale };

// One change as a watch delivers it. The object is immutable and shared: the store hands the
// same snapshot to every watch that gets the change (and keeps it as the stored object), so a
// write fanned out to N watchers costs N pointers, not N deep copies. Copying an event copies
// the pointer.
class WatchEvent {
 public:
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  WatchEvent() : object_(std::make_shared<const Json>()) {}
  WatchEvent(Type type, Json object)
      : type(type), object_(std::make_shared<const Json>(std::move(object))) {}
  // `object` must not be null.
  WatchEvent(Type type, std::shared_ptr<const Json> object)
      : type(type), object_(std::move(object)) {}

  Type type = Type::kAdded;
  // The full object (DELETED: its final state); ERROR: a v1 Status.
  const Json& object() const { return *object_; }
  const std::shared_ptr<const Json>& shared_object() const { return object_; }

 private:
  std::shared_ptr<const Json> object_;
};
// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
const char* WatchTypeName(WatchEvent::Type type);

// A stream of watch events. Implementations never block the writer that produced an event:
// a consumer that falls too far behind has its stream ended (Done() true after the queued
// events), and must re-watch from the last resourceVersion it saw, as with a real server.
// Thread safety: any method may be called from any thread.
class Watch {
 public:
  virtual ~Watch() = default;
  // The next event, waiting up to `timeout`; nullopt on timeout or when the stream is done.
  virtual std::optional<WatchEvent> Next(Duration timeout) = 0;
  // The next event if one is queued.
  virtual std::optional<WatchEvent> TryNext() = 0;
  // Called (from the writer's thread, no store lock held) whenever events are queued or the
  // stream ends. Replaces any previous callback; pass nullptr to clear.
  virtual void SetNotify(std::function<void()> notify) = 0;
  // Ends the stream; the producer drops it.
  virtual void Stop() = 0;
  // True when the stream has ended and every queued event was taken.
  virtual bool Done() = 0;
};

}  // namespace pjemu::api
