#include "emulator/controller/controller.h"

#include "emulator/api/resources.h"
#include "emulator/controller/job_spec.h"

namespace pjemu::controller {

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
  sources_.clear();
  sources_.resize(3);
  sources_[0].type = &api::PyTorchJobs();
  sources_[1].type = &api::Pods();
  sources_[1].label_selector = operator_label;
  sources_[2].type = &api::Services();
  sources_[2].label_selector = operator_label;
  alive_->store(true);
  for (Source& s : sources_) RETURN_IF_ERROR(OpenWatch(s));
  return Status::Ok();
}

void Controller::Stop() {
  alive_->store(false);
  for (Source& s : sources_) {
    if (!s.watch) continue;
    s.watch->SetNotify(nullptr);
    s.watch->Stop();
    s.watch.reset();
  }
  queue_.ShutDown();
}

Status Controller::OpenWatch(Source& source) {
  api::WatchOptions options;
  options.label_selector = source.label_selector;
  options.resource_version = source.last_rv;
  Result<std::shared_ptr<api::Watch>> w = client_.Watch(*source.type, options_.ns, options);
  if (!w.ok() && w.status().code() == Code::kExpired && !source.last_rv.empty()) {
    source.last_rv.clear();  // too old: start over with a fresh list (synthetic ADDEDs)
    options.resource_version = "";
    w = client_.Watch(*source.type, options_.ns, options);
  }
  if (!w.ok()) return w.status().WithContext("watch " + source.type->plural);
  source.watch = *w;
  const std::size_t index = &source - sources_.data();
  std::weak_ptr<std::atomic<bool>> alive = alive_;
  auto posted = source.drain_posted;
  EventLoop* loop = &loop_;
  source.watch->SetNotify([this, alive, posted, loop, index] {
    if (posted->exchange(true)) return;
    loop->Post([this, alive, posted, index] {
      auto a = alive.lock();
      if (!a || !a->load()) return;
      posted->store(false);
      Drain(index);
    });
  });
  Drain(index);  // events queued before the callback was set
  return Status::Ok();
}

void Controller::Drain(std::size_t index) {
  Source& source = sources_[index];
  if (!source.watch) return;
  while (auto ev = source.watch->TryNext()) {
    if (ev->type == api::WatchEvent::Type::kError) {
      if (Str(ev->object, "reason") == "Expired" || OptInt(ev->object, "code") == 410) {
        source.last_rv.clear();
      }
      continue;
    }
    const std::string rv = Str(Field(ev->object, "metadata"), "resourceVersion");
    if (!rv.empty()) source.last_rv = rv;
    if (ev->type == api::WatchEvent::Type::kBookmark) continue;
    Handle(source, ev->object);
  }
  if (source.watch->Done()) {
    source.watch->SetNotify(nullptr);
    source.watch.reset();
    Status s = OpenWatch(source);
    if (!s.ok()) {
      // The API is unavailable: try again shortly rather than lose the stream.
      std::weak_ptr<std::atomic<bool>> alive = alive_;
      loop_.PostAfter(1s, [this, alive, index] {
        auto a = alive.lock();
        if (a && a->load() && !sources_[index].watch) (void)OpenWatch(sources_[index]);
      });
    }
  }
}

void Controller::Handle(const Source& source, const Json& object) {
  const Json& meta = Field(object, "metadata");
  if (source.type == &api::PyTorchJobs()) {
    queue_.Add({Str(meta, "namespace"), Str(meta, "name")});
    return;
  }
  const Json& refs = Field(meta, "ownerReferences");
  if (!refs.is_array()) return;
  for (const Json& ref : refs) {
    const Json& controller = Field(ref, "controller");
    if (!controller.is_boolean() || !controller.get<bool>()) continue;
    if (Str(ref, "kind") != kKind || Str(ref, "apiVersion").rfind("kubeflow.org/", 0) != 0) {
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
