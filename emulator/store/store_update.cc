// Update (PUT) and Patch: both end in ApplyUpdate, which holds kube-apiserver's update rules.
#include <algorithm>
#include <optional>

#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/store/object_meta.h"
#include "emulator/store/store_impl.h"

namespace pjemu::store {
namespace {

using api::Subresource;
using api::WatchEvent;

// 422 with the patch library's message as the cause, as kube-apiserver's patch handler answers.
Status PatchApplyError(const std::string& message) {
  return Status(
      Code::kInvalid, "the server rejected our request due to an error in our request",
      Json{{"causes",
            Json::array({{{"reason", "UnexpectedServerResponse"}, {"message", message}}})}});
}

// Whether an update body leaves managedFields to the server: none sent (a /status write takes
// only .status), so that the write's entries are computed from the live ones alone.
bool NoneSent(const Json& incoming, Subresource sub) {
  if (sub != Subresource::kNone) return true;
  const Json& managed = api::Field(api::Field(incoming, "metadata"), "managedFields");
  return managed.is_null() || (managed.is_array() && managed.empty());
}

// Whether a patch may set managedFields (then the patched body sends them).
bool PatchMaySetManaged(api::PatchType patch_type, const Json& patch) {
  if (patch_type != api::PatchType::kJson) {
    const Json& meta = api::Field(patch, "metadata");
    return !meta.is_null() && (!meta.is_object() || meta.contains("managedFields"));
  }
  if (!patch.is_array()) return true;
  for (const Json& op : patch) {
    if (!op.is_object()) return true;
    for (const char* member : {"path", "from"}) {
      auto it = op.find(member);
      if (it == op.end()) continue;
      if (!it->is_string()) return true;
      const std::string& path = it->get_ref<const std::string&>();
      if (path.empty() || path == "/metadata" || path.rfind("/metadata/managedFields", 0) == 0) {
        return true;
      }
    }
  }
  return false;
}

// a == b but for metadata.managedFields, which either may lack (a deferred write's version).
bool SameButManagedFields(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object() || a.size() != b.size()) return a == b;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia.key() != ib.key()) return false;
    if (ia.key() != "metadata" || !ia->is_object() || !ib->is_object()) {
      if (*ia != *ib) return false;
      continue;
    }
    auto skip = [](const Json& m, Json::const_iterator it) {
      while (it != m.end() && it.key() == "managedFields") ++it;
      return it;
    };
    const Json &ma = *ia, &mb = *ib;
    auto ja = skip(ma, ma.begin()), jb = skip(mb, mb.begin());
    for (; ja != ma.end() && jb != mb.end(); ja = skip(ma, ++ja), jb = skip(mb, ++jb)) {
      if (ja.key() != jb.key() || *ja != *jb) return false;
    }
    if (ja != ma.end() || jb != mb.end()) return false;
  }
  return true;
}

// nlohmann's exception text without its "[json.exception.x.NNN] " prefix.
std::string CleanMessage(const std::string& what) {
  auto close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

}  // namespace

bool Store::Impl::MayDefer(Form form, const api::WriteOptions& options) const {
  return form == Form::kInProcess && !options.dry_run && !this->options.durability;
}

Result<ObjectPtr> Store::Impl::UpdateLocked(TypeRef type, std::string_view ns, Json object,
                                            Subresource sub, const api::WriteOptions& options,
                                            Form form) {
  RETURN_IF_ERROR(CheckBody(type, ns, object));
  std::string name = MetaString(object, "name");
  if (name.empty()) {
    return InvalidError(*type, "", {RequiredField("metadata.name", "name is required")});
  }
  const bool defer = MayDefer(form, options) && NoneSent(object, sub);
  ObjectPtr old =
      Find(type, {MetaString(object, "namespace"), name}, defer ? Form::kInProcess : Form::kServed);
  if (!old) return NotFoundError(type->PluralGroup(), name);
  return ApplyUpdate(type, old, std::move(object), sub, options, /*managed=*/false, defer);
}

Result<ObjectPtr> Store::Impl::PatchLocked(TypeRef type, std::string_view ns, std::string_view name,
                                           api::PatchType patch_type, const Json& patch,
                                           Subresource sub, const api::WriteOptions& options,
                                           Form form) {
  std::string key_ns = type->namespaced ? std::string(ns) : "";
  const bool defer = MayDefer(form, options) && !PatchMaySetManaged(patch_type, patch);
  ObjectPtr old = Find(type, {key_ns, std::string(name)}, defer ? Form::kInProcess : Form::kServed);
  if (!old) return NotFoundError(type->PluralGroup(), std::string(name));
  Json doc = *old;
  switch (patch_type) {
    case api::PatchType::kStrategicMerge:
      if (type->IsCustom()) {
        return Status(Code::kUnsupportedMediaType,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/apply-patch+yaml");
      }
      [[fallthrough]];  // core kinds: applied as a merge patch (see store.h deviations)
    case api::PatchType::kMerge:
      if (!patch.is_object()) {
        return BadRequestError("json: cannot unmarshal " + std::string(patch.type_name()) +
                               " into Go value of type map[string]interface {}");
      }
      doc.merge_patch(patch);
      break;
    case api::PatchType::kJson:
      if (!patch.is_array()) {
        return BadRequestError("json: cannot unmarshal " + std::string(patch.type_name()) +
                               " into Go value of type jsonpatch.Patch");
      }
      try {
        doc = doc.patch(patch);
      } catch (const Json::other_error& e) {
        // nlohmann reports a failed "test" as other_error 501 "unsuccessful: <the operation>".
        std::string what = e.what();
        auto at = what.find("unsuccessful: ");
        Json op = at == std::string::npos
                      ? Json()
                      : Json::parse(what.substr(at + 14), nullptr, /*allow_exceptions=*/false);
        std::string path = op.is_object() ? op.value("path", "") : "";
        return PatchApplyError("testing value " + path + " failed: test failed");
      } catch (const Json::exception& e) {
        return PatchApplyError(CleanMessage(e.what()));
      }
      break;
  }
  if (!doc.is_object()) return BadRequestError("the patched object is not a JSON object");
  if (MetaString(doc, "name") != name) {
    return BadRequestError("the name of the object (" + MetaString(doc, "name") +
                           ") does not match the name on the URL (" + std::string(name) + ")");
  }
  if (MetaString(doc, "namespace") != key_ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (doc.value("apiVersion", Json()) != type->ApiVersion() ||
      doc.value("kind", Json()) != type->kind) {
    return BadRequestError("apiVersion and kind may not be changed by a patch");
  }
  return ApplyUpdate(type, old, std::move(doc), sub, options, /*managed=*/false, defer);
}

Result<ObjectPtr> Store::Impl::ServerSideApplyLocked(TypeRef type, std::string_view ns,
                                                     std::string_view name, const Json& config,
                                                     Subresource sub,
                                                     const api::WriteOptions& options,
                                                     bool* created) {
  if (sub == Subresource::kScale) {
    return Status(Code::kNotFound, "the server could not find the requested resource");
  }
  std::string key_ns = type->namespaced ? std::string(ns) : "";
  ObjectPtr old = Find(type, {key_ns, std::string(name)});
  api::ManagedWrite write{options.field_manager, sub, FormatTime(clock.Now())};
  if (created) *created = !old;
  if (!old && sub != Subresource::kNone) return NotFoundError(type->PluralGroup(), std::string(name));
  ASSIGN_OR_RETURN(Json object, api::ApplyObject(*type, old.get(), config, write, options.force));
  if (!old) return CreateLocked(type, ns, std::move(object), options, /*managed=*/true);
  return ApplyUpdate(type, old, std::move(object), sub, options, /*managed=*/true);
}

// kube-apiserver's setPodHostAndAnnotations: a storage update under the uid and
// resourceVersion preconditions, below the pod strategy (no generation, no managedFields).
Result<ObjectPtr> Store::Impl::BindLocked(std::string_view ns, std::string_view name,
                                          const api::PodBinding& binding, bool dry_run) {
  TypeRef type = &api::Pods();
  ObjectPtr old = Find(type, {std::string(ns), std::string(name)});
  if (!old) return NotFoundError(type->PluralGroup(), std::string(name));
  const std::string have_uid = MetaString(*old, "uid");
  if (!binding.uid.empty() && binding.uid != have_uid) {
    return PreconditionFailedError(type->PluralGroup(), std::string(name), "UID", binding.uid,
                                   have_uid);
  }
  if (!binding.resource_version.empty() &&
      binding.resource_version != MetaString(*old, "resourceVersion")) {
    return ConflictError(type->PluralGroup(), std::string(name));
  }
  Json next = *old;
  RETURN_IF_ERROR(api::BindPod(next, binding, FormatTime(clock.Now())));
  if (dry_run) return std::make_shared<const Json>(std::move(next));
  return Put(type, std::move(next), WatchEvent::Type::kModified, old);
}

Result<ObjectPtr> Store::Impl::ApplyUpdate(TypeRef type, const ObjectPtr& old_ptr, Json incoming,
                                           Subresource sub, const api::WriteOptions& options,
                                           bool managed, bool defer) {
  const Json& old = *old_ptr;
  std::string name = MetaString(old, "name");
  std::string want_rv = MetaString(incoming, "resourceVersion");
  if (!want_rv.empty() && want_rv != MetaString(old, "resourceVersion")) {
    return ConflictError(type->PluralGroup(), name);
  }
  std::string want_uid = MetaString(incoming, "uid");
  if (!want_uid.empty() && want_uid != MetaString(old, "uid")) {
    return PreconditionFailedError(type->PluralGroup(), name, "UID", want_uid,
                                   MetaString(old, "uid"));
  }
  // An apply of /status computed the whole object's managed fields; the status write below
  // takes only .status from `incoming`, so they are carried over here.
  std::optional<Json> incoming_managed;
  if (managed && sub == Subresource::kStatus) {
    incoming_managed = api::Field(api::Field(incoming, "metadata"), "managedFields");
  }
  Json next;
  if (sub == Subresource::kScale) {
    return Status(Code::kNotFound, "the server could not find the requested resource");
  }
  if (sub == Subresource::kStatus) {
    if (!type->has_status) {
      return Status(Code::kNotFound, "the server could not find the requested resource");
    }
    // A status write takes only .status: the rest is the old object's (its old status is not
    // copied, only to be replaced, nor its managed fields, which are set anew below).
    next = api::CopyWithoutManagedFields(old, "status");
    if (incoming.contains("status")) next["status"] = std::move(incoming["status"]);
  } else {
    next = std::move(incoming);
    if (type->has_status) {  // a main-resource write never touches .status
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
    Json& meta = MutableMeta(next);
    const Json& old_meta = old["metadata"];
    for (const char* f : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation"}) {
      if (old_meta.contains(f)) {
        meta[f] = old_meta[f];
      } else {
        meta.erase(f);
      }
    }
    if (!type->namespaced) meta.erase("namespace");
    std::vector<FieldError> errs = ValidateObjectMeta(*type, next);
    if (old_meta.contains("deletionTimestamp")) {
      std::vector<std::string> before = Finalizers(old), added;
      for (const auto& f : Finalizers(next)) {
        if (std::find(before.begin(), before.end(), f) == before.end()) added.push_back(f);
      }
      if (!added.empty()) {
        std::string list;
        for (const auto& f : added) list += (list.empty() ? "" : ", ") + Json(f).dump();
        errs.push_back(ForbiddenField(
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, found new "
            "finalizers []string{" +
                list + "}"));
      }
    }
    if (!errs.empty()) return InvalidError(*type, name, errs);
    RETURN_IF_ERROR(ClusterIpLocked(type, next, &old));
    if (api::Field(next, "spec") != api::Field(old, "spec")) {
      MutableMeta(next)["generation"] = old_meta.value("generation", 0) + 1;
    }
    RETURN_IF_ERROR(Admit(type, next, &old, options));
  }
  MutableMeta(next)["resourceVersion"] = MetaString(old, "resourceVersion");
  const api::ManagedWrite write{options.field_manager, sub, FormatTime(clock.Now()),
                                /*stored_form=*/true};
  if (defer) {
    MutableMeta(next).erase("managedFields");  // the patched version's, or none: computed later
  } else if (!managed) {
    api::UpdateManagedFields(*type, &old, next, write);
  } else if (incoming_managed && incoming_managed->is_null()) {
    MutableMeta(next).erase("managedFields");
  } else if (incoming_managed) {
    MutableMeta(next)["managedFields"] = std::move(*incoming_managed);
  }
  api::CompactManagedFields(next);  // compared with the stored form below
  // A no-op write keeps the RV, as etcd does. A status write differs from the old object in its
  // status only, so only that is compared (not the whole pod again).
  bool same;
  if (sub == Subresource::kStatus) {
    same = next.contains("status") == old.contains("status") &&
           api::Field(next, "status") == api::Field(old, "status");
  } else {
    same = defer ? SameButManagedFields(next, old) : next == old;
  }
  if (same || options.dry_run) return std::make_shared<const Json>(std::move(next));
  const Key key{MetaString(old, "namespace"), name};
  if (ShouldRemove(next)) {
    if (defer) {  // the final state is served (the DELETED event): computed now
      api::UpdateManagedFields(*type, Find(type, key).get(), next, write);
      api::CompactManagedFields(next);
    }
    // The last finalizer went: the write is the deletion (one DELETED event, as the real server).
    return std::make_shared<const Json>(Remove(type, key, std::move(next)));
  }
  return Put(type, std::move(next), WatchEvent::Type::kModified, old_ptr, defer ? &write : nullptr);
}

}  // namespace pjemu::store
