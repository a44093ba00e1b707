// Controller: watches pytorchjobs (own key) and the operator's pods and services (owner key via
// the controller ownerReference), posts watch notifications onto the EventLoop, drains them into
// a de-duplicating WorkQueue there and runs the PyTorchJobReconciler per key. Ended watches
// resume from the last resourceVersion; Expired ones re-list from "".
// Thread safety: Start/Stop and all work on the EventLoop thread; watch notifications may arrive
// on any thread and only Post onto the loop.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
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

  // Opens the three watches (each starts with a synthetic ADDED per existing object, so every
  // job is reconciled once). Errors: the Client's Watch errors. REQUIRES: EventLoop thread.
  Status Start();
  // Stops the watches and drops pending work. Idempotent.
  void Stop();

  // Reconciles performed so far (for tests and metrics).
  std::int64_t reconciles() const { return reconciles_; }

 private:
  struct Source {
    const api::ResourceType* type = nullptr;
    std::string label_selector;
    std::shared_ptr<api::Watch> watch;
    std::string last_rv;
    std::shared_ptr<std::atomic<bool>> drain_posted = std::make_shared<std::atomic<bool>>(false);
  };

  Status OpenWatch(Source& source);
  void Drain(std::size_t index);
  void Handle(const Source& source, const Json& object);
  void ReconcileKey(const Request& request);

  client::Client& client_;
  EventLoop& loop_;
  ControllerOptions options_;
  PyTorchJobReconciler reconciler_;
  WorkQueue queue_;
  std::vector<Source> sources_;
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(false);
  std::int64_t reconciles_ = 0;
};

}  // namespace pjemu::controller
