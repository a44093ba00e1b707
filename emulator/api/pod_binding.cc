#include "emulator/api/pod_binding.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/pytorchjob_validation.h"
#include "emulator/api/resources.h"

namespace pjemu::api {
namespace {

Status BadBinding(const std::string& why) {
  return BadRequestError("Binding in version \"v1\" cannot be handled as a Binding: " + why);
}

Status CannotBind(const std::string& name, const std::string& why) {
  return Status(Code::kConflict,
                "Operation cannot be fulfilled on pods/binding \"" + name + "\": " + why);
}

// podutil.UpdatePodCondition with PodScheduled True: replaced where it is (keeping its
// transition time when it was True already), else appended.
void SetScheduled(Json& pod, const std::string& now) {
  Json cond = {{"type", "PodScheduled"},
               {"status", "True"},
               {"lastProbeTime", nullptr},
               {"lastTransitionTime", now}};
  Json& status = pod["status"];
  if (!status.is_object()) status = Json::object();
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (Json& c : conditions) {
    if (Str(c, "type") != "PodScheduled") continue;
    if (Str(c, "status") == "True" && c.contains("lastTransitionTime")) {
      cond["lastTransitionTime"] = c["lastTransitionTime"];
    }
    c = std::move(cond);
    return;
  }
  conditions.push_back(std::move(cond));
}

}  // namespace

Json BindingBody(std::string_view ns, std::string_view name, const PodBinding& binding) {
  Json meta = {{"name", name}, {"namespace", ns}};
  if (!binding.uid.empty()) meta["uid"] = binding.uid;
  if (!binding.resource_version.empty()) meta["resourceVersion"] = binding.resource_version;
  if (!binding.annotations.empty()) meta["annotations"] = binding.annotations;
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", std::move(meta)},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", binding.node}}}};
}

Result<PodBinding> ParseBinding(const Json& body, std::string_view ns, std::string_view name) {
  if (!body.is_object()) return BadBinding("the body is not a JSON object");
  const std::string api_version = Str(body, "apiVersion");
  const std::string kind = Str(body, "kind");
  if ((!api_version.empty() && api_version != "v1") || (!kind.empty() && kind != "Binding")) {
    return BadBinding("the object (" + api_version + ", Kind=" + kind + ") is not a v1 Binding");
  }
  const Json& meta = Field(body, "metadata");
  if (Str(meta, "name") != name) {
    return BadRequestError("name in URL does not match name in Binding object");
  }
  if (!Str(meta, "namespace").empty() && Str(meta, "namespace") != ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  PodBinding binding;
  binding.uid = Str(meta, "uid");
  binding.resource_version = Str(meta, "resourceVersion");
  for (const auto& [key, value] : Field(meta, "annotations").items()) {
    if (!value.is_string()) return BadBinding("metadata.annotations." + key + " is not a string");
    binding.annotations[key] = value.get<std::string>();
  }
  const Json& target = Field(body, "target");
  binding.node = Str(target, "name");
  std::vector<FieldError> errs;
  if (binding.node.empty()) errs.push_back({FieldError::Type::kRequired, "target.name", "", ""});
  if (const std::string kind = Str(target, "kind"); !kind.empty() && kind != "Node") {
    errs.push_back(NotSupportedError("target.kind", kind, {"Node", "<empty>"}));
  }
  static const ResourceType kBinding = {"", "v1", "Binding", "bindings", "binding"};
  RETURN_IF_ERROR(InvalidObject(kBinding, body, errs));
  return binding;
}

Status BindPod(Json& pod, const PodBinding& binding, const std::string& now) {
  const std::string name = Str(Field(pod, "metadata"), "name");
  const Json& spec = Field(pod, "spec");
  if (!Field(Field(pod, "metadata"), "deletionTimestamp").is_null()) {
    return CannotBind(name, "pod " + name + " is being deleted, cannot be assigned to a host");
  }
  if (const std::string node = Str(spec, "nodeName"); !node.empty()) {
    return CannotBind(name, "pod " + name + " is already assigned to node \"" + node + "\"");
  }
  if (const Json& gates = Field(spec, "schedulingGates"); gates.is_array() && !gates.empty()) {
    return CannotBind(name, "pod " + name + " has non-empty .spec.schedulingGates");
  }
  pod["spec"]["nodeName"] = binding.node;
  if (!binding.annotations.empty()) {
    Json& annotations = pod["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = Json::object();
    for (const auto& [key, value] : binding.annotations) annotations[key] = value;
  }
  SetScheduled(pod, now);
  return Status::Ok();
}

}  // namespace pjemu::api
