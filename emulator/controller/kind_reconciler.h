// KindReconciler: the one reconciler every job kind runs, over the kind's descriptor (kind.h).
// Each pass: re-read the object through the Client (NotFound or deleting: done), read the
// children its ChildTypes name, run its pure Sync and then its prepare hook (if any), carry out
// the actions in order (each created object through its decorate hook, if any; through
// ChildWriter, with the kind's ChildEvents; a Delete of the object itself ends the pass), write
// .status through the status subresource when it changed and report Sync's error before or
// after that write as Sync says. A shape nlohmann cannot read is kInternal, never an exception.
// Thread safety: not thread-safe; its Controller calls it on the EventLoop thread.
#pragma once

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/controller/children.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/kind.h"
#include "emulator/controller/reconcile.h"

namespace pjemu::controller {

class KindReconciler : public Reconciler {
 public:
  // `kind` must outlive the reconciler (descriptors are statics).
  // `options`: the cluster's, for the kind's prepare and decorate hooks.
  KindReconciler(client::Client& client, const Clock& clock, const KindDescriptor& kind,
                 KindOptions options = {});

  // Errors: the Client's (kConflict on a stale status write, kUnavailable, ...), Sync's error
  // and kInternal for unreadable JSON; the work queue retries with backoff.
  Result<ReconcileResult> Reconcile(const Request& request) override;

 private:
  Result<ReconcileResult> ReconcileOnce(const Request& request);
  Result<Children> ReadChildren(const Json& object);
  // Carries out one action; *done when it deleted the object itself.
  // Execute and Create consume the action's object (moved into the write).
  Status Execute(const Json& object, Action& action, bool* done);
  Status Create(const Json& object, Action& action);
  Status Delete(const Json& object, const Action& action, bool self);
  Status WriteStatus(const Json& stored, Sync& sync, const Request& request);  // takes the status

  client::Client& client_;
  const Clock& clock_;
  const KindDescriptor& kind_;
  const KindOptions options_;
  EventRecorder recorder_;
  ChildWriter writer_;
};

// The Controller of a kind: its row, the ChildTypes it watches, a KindReconciler with the
// cluster's `options`.
KindSpec SpecOf(const KindDescriptor& kind, client::Client& client, const Clock& clock,
                const KindOptions& options = {});

}  // namespace pjemu::controller
