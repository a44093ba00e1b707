#include "emulator/controller/kind_reconciler.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"

namespace pjemu::controller {

using api::Field, api::Str;

Action Action::Event(std::string event_type, std::string reason, std::string message) {
  Action a;
  a.event_type = std::move(event_type);
  a.reason = std::move(reason);
  a.message = std::move(message);
  return a;
}

Action Action::Create(const api::ResourceType& type, Json object) {
  Action a;
  a.kind = Kind::kCreate;
  a.type = &type;
  a.name = Str(Field(object, "metadata"), "name");
  a.object = std::move(object);
  return a;
}

Action Action::Update(const api::ResourceType& type, Json object) {
  Action a = Create(type, std::move(object));
  a.kind = Kind::kUpdate;
  return a;
}

Action Action::Delete(const api::ResourceType& type, std::string name) {
  Action a;
  a.kind = Kind::kDelete;
  a.type = &type;
  a.name = std::move(name);
  return a;
}

const api::ObjectList& Children::Of(const api::ResourceType& type) const {
  static const api::ObjectList kNone;
  auto it = by_type_.find(type.PluralGroup());
  return it == by_type_.end() ? kNone : it->second;
}

const Json* Children::One(const api::ResourceType& type) const {
  const api::ObjectList& all = Of(type);
  return all.empty() ? nullptr : &all.front();
}

void Children::Add(const api::ResourceType& type, api::ObjectList::Ptr object) {
  by_type_[type.PluralGroup()].push_back(std::move(object));
}

void Children::Ensure(const api::ResourceType& type) { by_type_[type.PluralGroup()]; }

KindReconciler::KindReconciler(client::Client& client, const Clock& clock,
                               const KindDescriptor& kind, KindOptions options)
    : client_(client),
      clock_(clock),
      kind_(kind),
      options_(std::move(options)),
      recorder_(client, clock, kind.controller_name),
      writer_(client, recorder_) {}

Result<ReconcileResult> KindReconciler::Reconcile(const Request& request) {
  return GuardJson(kind_.type().singular, request, [&] { return ReconcileOnce(request); });
}

Result<Children> KindReconciler::ReadChildren(const Json& object) {
  Children children;
  const std::string ns = Str(Field(object, "metadata"), "namespace");
  const std::string uid = Str(Field(object, "metadata"), "uid");
  for (const ChildType& child : kind_.children) {
    const api::ResourceType& type = child.type();
    children.Ensure(type);
    const std::string which = child.which(object);
    if (which.empty()) continue;
    if (child.read == ChildType::Read::kListControlled) {
      ASSIGN_OR_RETURN(api::ObjectList listed, ListControlled(client_, type, object, which));
      for (std::size_t i = 0; i < listed.size(); ++i) children.Add(type, listed.ptr(i));
      continue;
    }
    ASSIGN_OR_RETURN(api::ObjectList::Ptr got, GetIfExists(client_, type, ns, which));
    if (!got) continue;
    // Not controlled by this object: never adopted.
    if (child.read == ChildType::Read::kByNameControlled && !ControlledBy(*got, uid)) continue;
    children.Add(type, std::move(got));
  }
  return children;
}

Status KindReconciler::Create(const Json& object, Action& a) {
  const std::string ns = Str(Field(object, "metadata"), "namespace");
  Json child = kind_.decorate
                   ? kind_.decorate(std::move(a.object), *a.type, object, options_, recorder_)
                   : std::move(a.object);
  if (a.quiet) return client_.CreateShared(*a.type, ns, std::move(child)).status();
  const bool kubeflow = kind_.child_events == ChildEvents::kKubeflow;
  Result<api::ObjectList::Ptr> r =
      writer_.Create(object, *a.type, std::move(child), /*announce=*/kubeflow);
  if (!r.ok() && a.if_absent && r.status().code() == Code::kAlreadyExists) return Status::Ok();
  if (!r.ok()) return r.status();
  if (kind_.child_events == ChildEvents::kKubeControllerManager) {
    (void)recorder_.Record(
        object, "Normal", "SuccessfulCreate",
        "Created " + AsciiLower(a.type->kind) + ": " + Str(Field(**r, "metadata"), "name"));
  }
  return Status::Ok();
}

Status KindReconciler::Delete(const Json& object, const Action& a, bool self) {
  const std::string ns = Str(Field(object, "metadata"), "namespace");
  if (self && kind_.child_events == ChildEvents::kKubeflow) {
    // The common job controller's DeleteJob records the job's deletion under the pods' reasons.
    Result<Json> r = client_.Delete(*a.type, ns, a.name);
    if (!r.ok() && r.status().code() != Code::kNotFound) {
      (void)recorder_.Record(object, "Warning", "FailedDeletePod",
                             "Error deleting: " + r.status().message());
      return r.status();
    }
    (void)recorder_.Record(object, "Normal", "SuccessfulDeletePod", "Deleted job: " + a.name);
    return Status::Ok();
  }
  if (a.quiet || self) {
    api::DeleteOptions options;
    options.propagation_policy = a.propagation;
    Result<Json> r = client_.Delete(*a.type, ns, a.name, options);
    if (!r.ok() && r.status().code() != Code::kNotFound) return r.status();
    return Status::Ok();
  }
  const bool kubeflow = kind_.child_events == ChildEvents::kKubeflow;
  RETURN_IF_ERROR(writer_.Delete(object, *a.type, a.name, /*announce=*/kubeflow));
  if (kind_.child_events == ChildEvents::kKubeControllerManager) {
    (void)recorder_.Record(object, "Normal", "SuccessfulDelete",
                           "Deleted " + AsciiLower(a.type->kind) + ": " + a.name);
  }
  return Status::Ok();
}

Status KindReconciler::Execute(const Json& object, Action& a, bool* done) {
  const Json& meta = Field(object, "metadata");
  switch (a.kind) {
    case Action::Kind::kEvent:
      (void)recorder_.Record(object, a.event_type, a.reason, a.message);
      return Status::Ok();
    case Action::Kind::kCreate:
      return Create(object, a);
    case Action::Kind::kUpdate:
      return client_.UpdateShared(*a.type, Str(meta, "namespace"), std::move(a.object)).status();
    case Action::Kind::kDelete: {
      const bool self = *a.type == kind_.type() && a.name == Str(meta, "name");
      RETURN_IF_ERROR(Delete(object, a, self));
      *done = self;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status KindReconciler::WriteStatus(const Json& stored, Sync& sync, const Request& request) {
  if (!sync.status_changed) return Status::Ok();
  auto r = client_.UpdateShared(kind_.type(), request.ns,
                                api::StatusWriteBody(stored, std::move(sync.status)),
                                api::Subresource::kStatus);
  if (!r.ok()) {
    return r.status().WithContext("update status of " + kind_.type().singular + " " +
                                  request.Key());
  }
  return Status::Ok();
}

Result<ReconcileResult> KindReconciler::ReconcileOnce(const Request& request) {
  ASSIGN_OR_RETURN(api::ObjectList::Ptr got,
                   GetIfExists(client_, kind_.type(), request.ns, request.name));
  if (!got || api::Deleting(*got)) return ReconcileResult{};
  const Json& stored = *got;
  ASSIGN_OR_RETURN(Children children, ReadChildren(stored));
  Sync sync = kind_.sync(stored, children, clock_.Now());
  if (kind_.prepare) RETURN_IF_ERROR(kind_.prepare(client_, recorder_, stored, options_));
  for (Action& action : sync.actions) {
    bool done = false;
    RETURN_IF_ERROR(Execute(stored, action, &done));
    if (done) return ReconcileResult{};
  }
  if (sync.error_order == ErrorOrder::kBeforeStatus) RETURN_IF_ERROR(sync.error);
  RETURN_IF_ERROR(WriteStatus(stored, sync, request));
  RETURN_IF_ERROR(sync.error);
  ReconcileResult result;
  if (sync.requeue_after) result.requeue_after = std::max(*sync.requeue_after, Duration(1));
  return result;
}

KindSpec SpecOf(const KindDescriptor& kind, client::Client& client, const Clock& clock,
                const KindOptions& options) {
  KindSpec spec;
  spec.kind = &kind.type();
  for (const ChildType& child : kind.children) {
    if (child.watched) spec.children.push_back({&child.type(), child.watch_selector});
  }
  spec.reconciler = std::make_unique<KindReconciler>(client, clock, kind, options);
  return spec;
}

}  // namespace pjemu::controller
