#include "emulator/controller/controller.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/resources.h"

namespace pjemu::controller {

using api::Field, api::Str, api::kControllerName, api::kOperatorNameLabel;

Controller::Controller(client::Client& client, EventLoop& loop, ControllerOptions options)
    : client_(client),
      loop_(loop),
      options_(std::move(options)),
      reconciler_(client, loop.clock(), options_.init_container),
      queue_(
          loop, [this](const Request& r) { ReconcileKey(r); }, options_.backoff) {}

Controller::~Controller() { Stop(); }

Status Controller::Start() {
  const std::string operator_label = std::string(kOperatorNameLabel) + "=" + kControllerName;
  informers_.clear();
  AddInformer(api::PyTorchJobs(), "", [this](const Json& job) { EnqueueJob(job); });
  AddInformer(api::Pods(), operator_label, [this](const Json& pod) { EnqueueOwner(pod); });
  AddInformer(api::Services(), operator_label, [this](const Json& svc) { EnqueueOwner(svc); });
  for (auto& informer : informers_) {
    RETURN_IF_ERROR(informer->Start());
    informer->Drain();  // every existing job is reconciled once
  }
  return Status::Ok();
}

void Controller::Stop() {
  for (auto& informer : informers_) informer->Stop();
  queue_.ShutDown();
}

void Controller::AddInformer(const api::ResourceType& type, const std::string& label_selector,
                             std::function<void(const Json& object)> enqueue) {
  client::InformerOptions options;
  options.name = "controller " + type.plural;
  options.ns = options_.ns;
  options.label_selector = label_selector;
  // Level-based: every change (a relist's DELETED included) only names the job to reconcile.
  informers_.push_back(std::make_unique<client::Informer>(
      client_, loop_, type, std::move(options),
      [enqueue = std::move(enqueue)](const api::WatchEvent& event) { enqueue(event.object()); }));
}

void Controller::EnqueueJob(const Json& job) {
  const Json& meta = Field(job, "metadata");
  queue_.Add({Str(meta, "namespace"), Str(meta, "name")});
}

void Controller::EnqueueOwner(const Json& object) {
  const Json& meta = Field(object, "metadata");
  const Json& refs = Field(meta, "ownerReferences");
  if (!refs.is_array()) return;
  for (const Json& ref : refs) {
    const Json& controller = Field(ref, "controller");
    if (!controller.is_boolean() || !controller.get<bool>()) continue;
    if (Str(ref, "kind") != api::kPyTorchJobKind ||
        Str(ref, "apiVersion").rfind("kubeflow.org/", 0) != 0) {
      continue;
    }
    queue_.Add({Str(meta, "namespace"), Str(ref, "name")});
  }
}

void Controller::ReconcileKey(const Request& request) {
  ++reconciles_;
  Result<ReconcileResult> r = reconciler_.Reconcile(request);
  if (!r.ok()) {
    if (!r.status().terminal()) queue_.AddRateLimited(request);
    return;
  }
  queue_.Forget(request);
  if (r->requeue_after > Duration::zero()) queue_.AddAfter(request, r->requeue_after);
}

}  // namespace pjemu::controller
