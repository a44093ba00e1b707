#include "emulator/controller/controller.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"

namespace pjemu::controller {

using api::Field, api::Str;

Controller::Controller(client::Client& client, EventLoop& loop, KindSpec kind,
                       ControllerOptions options)
    : client_(client),
      loop_(loop),
      kind_(std::move(kind)),
      options_(std::move(options)),
      queue_(
          loop, [this](const Request& r) { ReconcileKey(r); }, options_.backoff) {}

Controller::~Controller() { Stop(); }

Status Controller::Start() {
  informers_.clear();
  AddInformer(*kind_.kind, "", [this](const Json& job) { EnqueueJob(job); });
  for (const ChildWatch& child : kind_.children) {
    AddInformer(*child.type, child.label_selector,
                [this](const Json& object) { EnqueueOwner(object); });
  }
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
  options.name = "controller " + kind_.kind->plural + " " + type.plural;
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
  for (const Json& ref : api::ArrayOr(Field(meta, "ownerReferences"))) {
    const Json& controller = Field(ref, "controller");
    if (!controller.is_boolean() || !controller.get<bool>()) continue;
    // The owner's kind and group (any version of it) are this controller's.
    const std::string api_version = Str(ref, "apiVersion");
    const std::string group = api_version.substr(0, api_version.find('/'));
    const bool same_group = api_version.find('/') == std::string::npos
                                ? kind_.kind->group.empty()
                                : group == kind_.kind->group;
    if (Str(ref, "kind") != kind_.kind->kind || !same_group) continue;
    queue_.Add({Str(meta, "namespace"), Str(ref, "name")});
  }
}

void Controller::ReconcileKey(const Request& request) {
  ++reconciles_;
  Result<ReconcileResult> r = kind_.reconciler->Reconcile(request);
  if (!r.ok()) {
    if (!r.status().terminal()) queue_.AddRateLimited(request);
    return;
  }
  queue_.Forget(request);
  if (r->requeue_after > Duration::zero()) queue_.AddAfter(request, r->requeue_after);
}

}  // namespace pjemu::controller
