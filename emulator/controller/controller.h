// Controller: follows pytorchjobs (own key) and the operator's pods and services (owner key via
// the controller ownerReference) through one client::Informer each, feeds their changes into a
// de-duplicating WorkQueue on the EventLoop and runs the PyTorchJobReconciler per key. The
// informers resume ended watches, relist on 410 and retry errors (emulator/client/informer.h).
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
#include "emulator/controller/desired_objects.h"
#include "emulator/controller/pytorchjob_reconciler.h"
#include "emulator/controller/work_queue.h"

namespace pjemu::controller {

struct ControllerOptions {
  std::string ns;  // namespace to watch; "" = all namespaces
  InitContainerOptions init_container;
  BackoffOptions backoff;
};

class Controller {
 public:
  Controller(client::Client& client, EventLoop& loop, ControllerOptions options = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Lists and watches the three types (every existing job is reconciled once). Errors: the
  // Client's List and Watch errors. REQUIRES: EventLoop thread.
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
  // The owning PyTorchJob, named by the object's controller ownerReference, if any.
  void EnqueueOwner(const Json& object);
  void ReconcileKey(const Request& request);

  client::Client& client_;
  EventLoop& loop_;
  ControllerOptions options_;
  PyTorchJobReconciler reconciler_;
  WorkQueue queue_;
  std::vector<std::unique_ptr<client::Informer>> informers_;  // jobs, pods, services
  std::int64_t reconciles_ = 0;
};

}  // namespace pjemu::controller
