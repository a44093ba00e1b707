// Controller: one job kind's watch-driven loop. It follows the kind's objects (own key) and the
// children the kind's controller owns (owner key via the controller ownerReference) through one
// client::Informer each, feeds their changes into a de-duplicating WorkQueue on the EventLoop
// and runs the kind's Reconciler per key. The informers resume ended watches, relist on 410 and
// retry errors (emulator/client/informer.h). Each kind runs its own Controller with its own
// queue, so two kinds' jobs of the same namespace/name never share a key.
// Thread safety: Start/Stop and all work on the EventLoop thread; watch notifications may arrive
// on any thread and only Post onto the loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"
#include "emulator/controller/reconcile.h"
#include "emulator/controller/work_queue.h"

namespace pjemu::controller {

// A child type the kind's controller owns, and the label selector that narrows the watch to it.
struct ChildWatch {
  const api::ResourceType* type = nullptr;
  std::string label_selector;
};

// What makes a Controller one kind's: the kind, its children and its reconciler.
struct KindSpec {
  const api::ResourceType* kind = nullptr;
  std::vector<ChildWatch> children;
  std::unique_ptr<Reconciler> reconciler;
};

struct ControllerOptions {
  std::string ns;  // namespace to watch; "" = all namespaces
  BackoffOptions backoff;
};

class Controller {
 public:
  Controller(client::Client& client, EventLoop& loop, KindSpec kind,
             ControllerOptions options = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Lists and watches the kind and its children (every existing job is reconciled once).
  // Errors: the Client's List and Watch errors. REQUIRES: EventLoop thread.
  Status Start();
  // Stops the informers and drops pending work. Idempotent.
  void Stop();

  // Reconciles performed so far (for tests and metrics).
  std::int64_t reconciles() const { return reconciles_; }

 private:
  // Adds an informer over `type` whose every event calls enqueue(object).
  void AddInformer(const api::ResourceType& type, const std::string& label_selector,
                   std::function<void(const Json& object)> enqueue);
  void EnqueueJob(const Json& job);
  // The owning job of this kind, named by the object's controller ownerReference, if any.
  void EnqueueOwner(const Json& object);
  void ReconcileKey(const Request& request);

  client::Client& client_;
  EventLoop& loop_;
  KindSpec kind_;
  ControllerOptions options_;
  WorkQueue queue_;
  std::vector<std::unique_ptr<client::Informer>> informers_;  // the kind, then its children
  std::int64_t reconciles_ = 0;
};

}  // namespace pjemu::controller
