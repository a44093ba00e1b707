#include "emulator/controller/children.h"

#include <cctype>
#include <charconv>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/common/strings.h"

namespace pjemu::controller {

using api::Field, api::OptInt, api::Str;

namespace {

std::string LowerKind(const api::ResourceType& type) { return AsciiLower(type.kind); }

}  // namespace

Result<api::ObjectList> ListControlled(client::Client& client, const api::ResourceType& type,
                                       const Json& owner, const std::string& label_selector) {
  const Json& meta = Field(owner, "metadata");
  api::ListOptions options;
  options.label_selector = label_selector;
  ASSIGN_OR_RETURN(api::ObjectList listed,
                   client.ListObjects(type, Str(meta, "namespace"), options));
  const std::string uid = Str(meta, "uid");
  api::ObjectList out;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (ControlledBy(listed[i], uid)) out.push_back(listed.ptr(i));
  }
  return out;
}

bool ControlledBy(const Json& object, const std::string& uid) {
  for (const Json& ref : api::ArrayOr(Field(Field(object, "metadata"), "ownerReferences"))) {
    const Json& controller = Field(ref, "controller");
    if (controller.is_boolean() && controller.get<bool>() && Str(ref, "uid") == uid) return true;
  }
  return false;
}

Json ControllerRef(const Json& owner) {
  const Json& meta = Field(owner, "metadata");
  return {{"apiVersion", Str(owner, "apiVersion")},
          {"kind", Str(owner, "kind")},
          {"name", Str(meta, "name")},
          {"uid", Str(meta, "uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

Result<api::ObjectList::Ptr> ChildWriter::Create(const Json& owner, const api::ResourceType& type,
                                                 Json object, bool announce) {
  const std::string ns = Str(Field(owner, "metadata"), "namespace");
  const std::string name = Str(Field(object, "metadata"), "name");
  auto r = client_.CreateShared(type, ns, std::move(object));
  if (!r.ok()) {
    (void)recorder_.Record(owner, "Warning", "FailedCreate" + type.kind,
                           "Error creating: " + r.status().message());
    return r.status().WithContext("create " + LowerKind(type) + " " + name);
  }
  if (announce) {
    (void)recorder_.Record(owner, "Normal", "SuccessfulCreate" + type.kind,
                           "Created " + LowerKind(type) + ": " + name);
  }
  return r;
}

Status ChildWriter::Delete(const Json& owner, const api::ResourceType& type,
                           const std::string& name, bool announce) {
  const std::string ns = Str(Field(owner, "metadata"), "namespace");
  Result<Json> r = client_.Delete(type, ns, name);
  if (!r.ok() && r.status().code() == Code::kNotFound) return Status::Ok();
  if (!r.ok()) {
    (void)recorder_.Record(owner, "Warning", "FailedDelete" + type.kind,
                           "Error deleting: " + r.status().message());
    return r.status().WithContext("delete " + LowerKind(type) + " " + name);
  }
  if (announce) {
    (void)recorder_.Record(owner, "Normal", "SuccessfulDelete" + type.kind,
                           "Deleted " + LowerKind(type) + ": " + name);
  }
  return Status::Ok();
}

Result<api::ObjectList::Ptr> GetIfExists(client::Client& client, const api::ResourceType& type,
                                         const std::string& ns, const std::string& name) {
  auto got = client.GetShared(type, type.namespaced ? ns : "", name);
  if (got.ok()) return std::move(*got);
  if (got.status().code() == Code::kNotFound) return api::ObjectList::Ptr();
  return got.status();
}

Result<ReconcileResult> GuardJson(const std::string& what, const Request& request,
                                  const std::function<Result<ReconcileResult>()>& pass) {
  try {
    return pass();
  } catch (const Json::exception& e) {
    return InternalError("reconcile " + what + " " + request.Key() + ": " + e.what());
  }
}

bool IsActivePod(const Json& pod) { return !api::IsPodTerminal(pod) && !api::Deleting(pod); }

std::optional<std::int64_t> ContainerExitCode(const Json& pod, const std::string& container) {
  std::optional<std::int64_t> code;
  for (const Json& cs : api::ArrayOr(Field(Field(pod, "status"), "containerStatuses"))) {
    const Json& terminated = Field(Field(cs, "state"), "terminated");
    if (Str(cs, "name") == container && terminated.is_object()) {
      code = OptInt(terminated, "exitCode").value_or(0);
    }
  }
  return code;
}

std::int64_t PodRestarts(const Json& pod) {
  std::int64_t n = 0;
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    for (const Json& cs : api::ArrayOr(Field(Field(pod, "status"), key))) {
      n += OptInt(cs, "restartCount").value_or(0);
    }
  }
  return n;
}

std::optional<std::int64_t> IndexLabel(const Json& object, const std::string& label) {
  const std::string s = Str(Field(Field(object, "metadata"), "labels"), label.c_str());
  std::int64_t n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || n < 0) return std::nullopt;
  return n;
}

}  // namespace pjemu::controller
