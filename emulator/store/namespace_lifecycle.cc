// Namespace lifecycle (StoreOptions::namespace_lifecycle), kube-apiserver's half of it: the
// namespace registry's `kubernetes` finalizer and Terminating phase, and the NamespaceLifecycle
// admission plugin's refusal of new content in a namespace being deleted. The namespace
// controller (emulator/namespaces) deletes the content and removes the finalizer.
#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/store/object_meta.h"
#include "emulator/store/store_impl.h"

namespace pjemu::store {
namespace {

constexpr char kKubernetesFinalizer[] = "kubernetes";

std::vector<std::string> SpecFinalizers(const Json& ns) {
  std::vector<std::string> out;
  const Json& spec = api::Field(ns, "spec");
  const Json& list = api::Field(spec, "finalizers");
  if (!list.is_array()) return out;
  for (const Json& f : list) {
    if (f.is_string()) out.push_back(f);
  }
  return out;
}

}  // namespace

Status Store::Impl::RefuseInTerminating(TypeRef type, const std::string& ns,
                                        const std::string& name) const {
  ObjectPtr object = Find(&api::Namespaces(), {"", ns});
  if (!object || !(*object)["metadata"].contains("deletionTimestamp")) return Status::Ok();
  std::string what = type->PluralGroup() + (name.empty() ? "" : " \"" + name + "\"");
  return Status(Code::kForbidden,
                what + " is forbidden: unable to create new content in namespace " + ns +
                    " because it is being terminated",
                Json{{"name", name},
                     {"kind", type->plural},
                     {"causes", Json::array({{{"reason", "NamespaceTerminating"},
                                              {"message", "namespace " + ns +
                                                              " is being terminated"},
                                              {"field", "metadata.namespace"}}})}});
}

void Store::Impl::AddNamespaceFinalizer(TypeRef type, Json& object) const {
  if (!options.namespace_lifecycle || type != &api::Namespaces()) return;
  auto finalizers = SpecFinalizers(object);
  if (std::find(finalizers.begin(), finalizers.end(), kKubernetesFinalizer) != finalizers.end()) {
    return;
  }
  if (!object.contains("spec") || !object["spec"].is_object()) object["spec"] = Json::object();
  if (!object["spec"].contains("finalizers") || !object["spec"]["finalizers"].is_array()) {
    object["spec"]["finalizers"] = Json::array();
  }
  object["spec"]["finalizers"].push_back(kKubernetesFinalizer);
}

// nullopt: not handled here (no lifecycle, or a namespace without finalizers: it and its
// content go at once, as before).
std::optional<Result<Json>> Store::Impl::TerminateNamespace(const ObjectPtr& ns,
                                                            const api::DeleteOptions& options) {
  if (!this->options.namespace_lifecycle) return std::nullopt;
  const bool deleting = (*ns)["metadata"].contains("deletionTimestamp");
  const bool finalized = SpecFinalizers(*ns).empty() && Finalizers(*ns).empty();
  if (finalized && !deleting) return std::nullopt;
  if (finalized) {  // the namespace controller is done: it goes
    if (options.dry_run) return Result<Json>(*ns);
    return Result<Json>(Remove(&api::Namespaces(), {"", MetaString(*ns, "name")}));
  }
  if (deleting || options.dry_run) return Result<Json>(*ns);
  Json next = *ns;
  MutableMeta(next)["deletionTimestamp"] = FormatTime(clock.Now());
  MutableMeta(next)["deletionGracePeriodSeconds"] = 0;
  if (!next.contains("status") || !next["status"].is_object()) next["status"] = Json::object();
  next["status"]["phase"] = "Terminating";
  return Result<Json>(*Put(&api::Namespaces(), std::move(next), api::WatchEvent::Type::kModified, ns));
}

}  // namespace pjemu::store
