// Router's pods/{name}/eviction subresource and the served status of PodDisruptionBudgets
// (router.h). The decision and the status are api::CheckEviction and api::DisruptionStatus; this
// file decodes the Eviction, gathers the pods, budgets and controllers' scales from the store,
// and deletes the pod.
#include "emulator/api/disruption.h"
#include "emulator/api/json_fields.h"
#include "emulator/apiserver/router.h"

namespace pjemu::apiserver {
namespace {

using api::Field;
using api::Str;

Status BadEviction(const std::string& why) {
  return BadRequestError("Eviction in version \"v1\" cannot be handled as a Eviction: " + why);
}

// The Eviction body: kind Eviction, apiVersion policy/v1 or policy/v1beta1 (what kubectl 1.20
// sends), metadata.name the URL's; returns its deleteOptions ({} when absent).
Result<Json> DecodeEviction(const std::string& text, const ApiPath& path) {
  Json body;
  try {
    body = Json::parse(text);
  } catch (const Json::exception& e) {
    return BadEviction(e.what());
  }
  if (!body.is_object()) return BadEviction("the body is not a JSON object");
  const std::string api_version = Str(body, "apiVersion");
  const std::string kind = Str(body, "kind");
  if ((!api_version.empty() && api_version != "policy/v1" && api_version != "policy/v1beta1") ||
      (!kind.empty() && kind != "Eviction")) {
    return BadEviction("the object (" + api_version + ", Kind=" + kind +
                       ") is not a policy/v1 or policy/v1beta1 Eviction");
  }
  const Json& meta = Field(body, "metadata");
  if (Str(meta, "name") != path.name) {
    return BadRequestError("name in URL does not match name in Eviction object");
  }
  if (!Str(meta, "namespace").empty() && Str(meta, "namespace") != path.ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  const Json& options = Field(body, "deleteOptions");
  if (!options.is_null() && !options.is_object()) {
    return BadEviction("deleteOptions: must be an object, got " + options.dump());
  }
  return options.is_object() ? options : Json::object();
}

HttpResponse Success(int code) {
  HttpResponse response;
  response.status = code;
  response.body = Json{
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", Json::object()},
      {"status", "Success"},
      {"code", code}}.dump();
  return response;
}

}  // namespace

Json Router::BudgetWithStatus(Json pdb) const {
  const std::string ns = Str(Field(pdb, "metadata"), "namespace");
  auto pods = store_.List(api::Pods(), ns, {});
  std::vector<Json> items;
  if (pods.ok()) {
    for (const Json& pod : api::ArrayOr(Field(*pods, "items"))) items.push_back(pod);
  }
  // The controller's Scale, as the disruption controller reads it through the scale client.
  api::ControllerScale scale = [this](const Json& pod,
                                      const Json& ref) -> std::optional<std::int64_t> {
    const api::ResourceType* type = api::FindByKind(Str(ref, "apiVersion"), Str(ref, "kind"));
    if (type == nullptr || !type->has_scale) return std::nullopt;
    auto owner = store_.Get(*type, Str(Field(pod, "metadata"), "namespace"), Str(ref, "name"));
    if (!owner.ok() || Str(Field(*owner, "metadata"), "uid") != Str(ref, "uid")) {
      return std::nullopt;
    }
    return ScaleSpecReplicas(*owner);
  };
  pdb["status"] = api::DisruptionStatus(pdb, items, scale, clock_.Now());
  return pdb;
}

Result<HttpResponse> Router::Evict(const HttpRequest& request, const ApiPath& path,
                                   const Query& query) const {
  if (request.method != "POST") {
    return Status(Code::kMethodNotAllowed,
                  "the server does not allow this method on the requested resource");
  }
  if (path.ns.empty()) return UnknownPathError();
  ASSIGN_OR_RETURN(Json delete_body, DecodeEviction(request.body, path));
  ASSIGN_OR_RETURN(api::DeleteOptions options, DeleteOptionsFrom(delete_body, query));
  std::lock_guard<std::mutex> lock(evictions_);
  ASSIGN_OR_RETURN(Json pod, store_.Get(api::Pods(), path.ns, path.name));
  ASSIGN_OR_RETURN(Json listed, store_.List(api::PodDisruptionBudgets(), path.ns, {}));
  std::vector<Json> budgets;
  for (const Json& pdb : api::ArrayOr(Field(listed, "items"))) {
    budgets.push_back(BudgetWithStatus(pdb));
  }
  RETURN_IF_ERROR(api::CheckEviction(pod, budgets));
  RETURN_IF_ERROR(store_.Delete(api::Pods(), path.ns, path.name, options).status());
  return Success(201);
}

}  // namespace pjemu::apiserver
