// Router's pods/{name}/eviction and pods/{name}/binding subresources and the served status of
// PodDisruptionBudgets (router.h). The gather-decide-delete and the status are api::EvictPod and
// api::BudgetWithStatus (shared with client::LocalClient::Evict) over the store, the binding is
// api::ParseBinding and Store::BindPod; this file decodes the bodies and answers.
#include "emulator/api/disruption.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pod_binding.h"
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

// What the pods' create subresources (eviction, binding) take: a POST to a namespaced path.
Status PostInNamespace(const HttpRequest& request, const ApiPath& path) {
  if (request.method != "POST") {
    return Status(Code::kMethodNotAllowed,
                  "the server does not allow this method on the requested resource");
  }
  if (path.ns.empty()) return UnknownPathError();
  return Status::Ok();
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
  api::AccessOver<store::Store> access(store_);
  return api::BudgetWithStatus(access, std::move(pdb), clock_.Now());
}

Result<HttpResponse> Router::Evict(const HttpRequest& request, const ApiPath& path,
                                   const Query& query) const {
  RETURN_IF_ERROR(PostInNamespace(request, path));
  ASSIGN_OR_RETURN(Json delete_body, DecodeEviction(request.body, path));
  ASSIGN_OR_RETURN(api::DeleteOptions options, DeleteOptionsFrom(delete_body, query));
  std::lock_guard<std::mutex> lock(evictions_);
  api::AccessOver<store::Store> access(store_);
  RETURN_IF_ERROR(api::EvictPod(access, path.ns, path.name, options));
  return Success(201);
}

Result<HttpResponse> Router::Bind(const HttpRequest& request, const ApiPath& path,
                                  const Query& query) const {
  RETURN_IF_ERROR(PostInNamespace(request, path));
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return BadRequestError(
        "Binding in version \"v1\" cannot be handled as a Binding: the body is not JSON");
  }
  ASSIGN_OR_RETURN(api::PodBinding binding, api::ParseBinding(body, path.ns, path.name));
  ASSIGN_OR_RETURN(bool dry_run, DryRun(query));
  RETURN_IF_ERROR(store_.BindPod(path.ns, path.name, binding, dry_run).status());
  return Success(201);
}

}  // namespace pjemu::apiserver
