// What every job kind's controller does with the objects it owns, whatever the kind: list the
// children it controls, make a controller ownerReference to itself, create and delete children
// with the warning events Kubernetes' controllers record when that fails, and the facts about a
// pod that restart rules read (is it active, a container's exit code, its restarts). The kinds
// keep their decisions (when to restart, when the job fails); this is only the bookkeeping.
// Thread safety: the free functions are pure; ChildWriter is used from one controller's
// EventLoop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/client/client.h"
#include "emulator/common/status.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::controller {

// The objects of `type` in the owner's namespace matching `label_selector` whose controller
// ownerReference names the owner's uid. Errors: the Client's.
// Read as shared snapshots (Client::ListObjects): in process, the store's own, not copies.
Result<api::ObjectList> ListControlled(client::Client& client, const api::ResourceType& type,
                                       const Json& owner, const std::string& label_selector);
// The object ns/name of `type` (ns ignored for a cluster-scoped type) as a shared snapshot
// (Client::GetShared: in process, the store's own); null when NotFound. Errors: the Client's
// others.
Result<api::ObjectList::Ptr> GetIfExists(client::Client& client, const api::ResourceType& type,
                                         const std::string& ns, const std::string& name);
// Runs one reconcile pass. Objects are user JSON: a shape nlohmann cannot read becomes
// kInternal "reconcile <what> <ns/name>: <why>", never an exception out of the work queue.
Result<ReconcileResult> GuardJson(const std::string& what, const Request& request,
                                  const std::function<Result<ReconcileResult>()>& pass);
// True when the object's controller ownerReference names `uid`.
bool ControlledBy(const Json& object, const std::string& uid);
// {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true} of a stored object.
Json ControllerRef(const Json& owner);

// Creates and deletes children on an owner's behalf. A failed write records a Warning event
// `FailedCreate<Kind>` / `FailedDelete<Kind>` ("Error creating: <why>") on the owner and returns
// the error with context; with `announce`, a success records `SuccessfulCreate<Kind>` /
// `SuccessfulDelete<Kind>` ("Created pod: <name>"), as the Kubeflow operator does. A delete of
// an object already gone succeeds silently.
class ChildWriter {
 public:
  ChildWriter(client::Client& client, EventRecorder& recorder)
      : client_(client), recorder_(recorder) {}
  // The answer is the created object's snapshot (Client::CreateShared).
  Result<api::ObjectList::Ptr> Create(const Json& owner, const api::ResourceType& type, Json object,
                                      bool announce);
  Status Delete(const Json& owner, const api::ResourceType& type, const std::string& name,
                bool announce);

 private:
  client::Client& client_;
  EventRecorder& recorder_;
};

// --- Facts about a pod that restart and status rules read. ---

// Not Succeeded, not Failed, no deletionTimestamp (FilterActivePods).
bool IsActivePod(const Json& pod);
// The exit code of `container`'s terminated state; nullopt while it has none.
std::optional<std::int64_t> ContainerExitCode(const Json& pod, const std::string& container);
// Sum of restartCount over the pod's init and app containers.
std::int64_t PodRestarts(const Json& pod);
// A non-negative integer label of the object (a replica or completion index); nullopt when
// absent or not a number.
std::optional<std::int64_t> IndexLabel(const Json& object, const std::string& label);

}  // namespace pjemu::controller
