// The resource verbs of Router: get, list, watch, create, update, patch, delete and
// deletecollection (router.h). Scale and logs live in subresources.cc.
#include "emulator/api/managed_fields.h"
#include "emulator/apiserver/field_validation.h"
#include "emulator/apiserver/router.h"
#include "emulator/apiserver/tables.h"
#include "emulator/apiserver/watch_stream.h"

namespace pjemu::apiserver {
namespace {

HttpResponse WithWarnings(HttpResponse response, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) response.headers.emplace_back("Warning", WarningHeader(w));
  return response;
}

// A JSON body already serialized (CompactText).
HttpResponse TextResponse(int code, std::string body) {
  HttpResponse response;
  response.status = code;
  response.body = std::move(body);
  return response;
}

HttpResponse JsonResponse(int code, const Json& body, const std::vector<std::string>& warnings) {
  return WithWarnings(TextResponse(code, CompactText(body)), warnings);
}

// The text of store::Store::List's <Kind>List (keys in nlohmann's sorted order), written around
// the items' cached texts: a LIST serializes only objects that changed since they were last sent.
std::string ListText(const api::ResourceType& type, const store::SharedList& list,
                     ObjectTexts& texts) {
  std::string body = "{\"apiVersion\":" + CompactText(type.ApiVersion()) + ",\"items\":[";
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    if (i > 0) body += ',';
    body += *texts.Text(list.items[i]);
  }
  body += "],\"kind\":" + CompactText(type.ListKind()) + ",\"metadata\":{\"resourceVersion\":\"" +
          std::to_string(list.resource_version) + "\"}}";
  return body;
}

// The reply to a write: the object with `code`, or the store's error. Either way it carries the
// decoder's warnings, as kube-apiserver's, which records them as headers while it handles the
// request (so an unknown field still warns when admission then refuses the object).
HttpResponse WriteResponse(int code, const Result<Json>& written,
                           const std::vector<std::string>& warnings) {
  if (!written.ok()) return WithWarnings(ErrorResponse(written.status()), warnings);
  return JsonResponse(code, *written, warnings);
}

// The write's manager: fieldManager, else the User-Agent's prefix (kube-apiserver's
// managerOrUserAgent).
std::string ManagerOf(const HttpRequest& request, const Query& query) {
  std::string manager = query.Get("fieldManager");
  return manager.empty() ? api::ManagerFromUserAgent(request.Header("user-agent")) : manager;
}

// kube-apiserver's PatchOptions validation: fieldManager is required for apply, force only
// allowed there.
Status CheckPatchOptions(const Query& query, bool apply) {
  std::string error;
  if (apply && query.Get("fieldManager").empty()) {
    error = "fieldManager: Required value: is required for apply patch";
  } else if (!apply && !query.Get("force").empty()) {
    error = "force: Forbidden: may not be specified for non-apply patch";
  }
  if (error.empty()) return Status::Ok();
  auto colon = error.find(": ");
  Json cause = {{"reason", apply ? "FieldValueRequired" : "FieldValueForbidden"},
                {"message", error.substr(colon + 2)},
                {"field", error.substr(0, colon)}};
  return Status(Code::kInvalid, "PatchOptions.meta.k8s.io \"\" is invalid: " + error,
                Json{{"group", "meta.k8s.io"}, {"kind", "PatchOptions"}, {"causes", {cause}}});
}

Result<api::ListOptions> ListOptionsFrom(const Query& query) {
  api::ListOptions options;
  options.label_selector = query.Get("labelSelector");
  options.field_selector = query.Get("fieldSelector");
  return options;
}

// The checks kube-apiserver makes between the decoded body and the URL.
Status CheckIdentity(const api::ResourceType& type, Json& object, const ApiPath& path,
                     const std::string& body) {
  bool missing_kind =
      !object.contains("kind") || !object["kind"].is_string() || object["kind"] == "";
  bool custom = type.IsCustom();
  if (missing_kind && custom) {
    // Custom resources decode as unstructured objects, which must name their kind.
    return BadRequestError("Object 'Kind' is missing in '" + body.substr(0, 1024) + "'");
  }
  if (missing_kind) {
    // Built-in kinds decode with the URL's group/version/kind as the default.
    object["kind"] = type.kind;
    if (!object.contains("apiVersion") || object["apiVersion"] == "") {
      object["apiVersion"] = type.ApiVersion();
    }
  }
  std::string api_version = object.value("apiVersion", "");
  std::string kind = object["kind"].get<std::string>();
  if (api_version != type.ApiVersion() || kind != type.kind) {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind + ": the object (" +
                           api_version + ", Kind=" + kind + ") does not match the expected " +
                           type.ApiVersion() + ", Kind=" + type.kind);
  }
  if (!object.contains("metadata")) object["metadata"] = Json::object();
  if (!object["metadata"].is_object()) {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind +
                           ": metadata must be an object");
  }
  Json& meta = object["metadata"];
  std::string ns = meta.value("namespace", "");
  if (type.namespaced && !ns.empty() && ns != path.ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (!path.name.empty()) {
    std::string name = meta.value("name", "");
    if (name != path.name) {
      return BadRequestError("the name of the object (" + name +
                             ") does not match the name on the URL (" + path.name + ")");
    }
  }
  return Status::Ok();
}

// What a create or an update reads from the request before it writes: the body decoded under
// the fieldValidation mode and checked against the URL, the decoder's warnings, and the write's
// options (dryRun, fieldManager; options.warnings points at warnings).
struct DecodedWrite {
  Json object;
  std::vector<std::string> warnings;
  api::WriteOptions options;
};

Status DecodeWrite(const HttpRequest& request, const ApiPath& path, const Query& query,
                   DecodedWrite* w) {
  ASSIGN_OR_RETURN(FieldValidation mode, ParseFieldValidation(query.Get("fieldValidation")));
  ASSIGN_OR_RETURN(w->object, DecodeBody(*path.type, request.body, mode, &w->warnings));
  RETURN_IF_ERROR(CheckIdentity(*path.type, w->object, path, request.body));
  ASSIGN_OR_RETURN(w->options.dry_run, DryRun(query));
  w->options.field_manager = ManagerOf(request, query);
  w->options.warnings = &w->warnings;
  return Status::Ok();
}

api::Subresource SubresourceOf(const ApiPath& path) {
  return path.subresource == "status" ? api::Subresource::kStatus : api::Subresource::kNone;
}

}  // namespace

Result<bool> DryRun(const Query& query) {
  std::string value = query.Get("dryRun");
  if (value.empty()) return false;
  if (value == "All") return true;
  return Status(Code::kBadRequest, "Invalid dryRun parameter: unsupported value: \"" + value +
                                       "\": supported values: \"All\"");
}

Result<HttpResponse> Router::Get(const HttpRequest& request, const ApiPath& path,
                                 const Query&) const {
  ASSIGN_OR_RETURN(store::ObjectPtr stored, store_.GetShared(*path.type, path.ns, path.name));
  const bool table = WantsTable(request.Header("accept"));
  if (*path.type != api::PodDisruptionBudgets() && !table) {
    return TextResponse(200, *texts_->Text(stored));  // as stored: serialized once per version
  }
  Json object = *stored;
  if (*path.type == api::PodDisruptionBudgets()) object = BudgetWithStatus(std::move(object));
  if (table) return JsonResponse(200, ObjectToTable(*path.type, object, clock_.Now()), {});
  return JsonResponse(200, object, {});
}

Result<HttpResponse> Router::List(const HttpRequest& request, const ApiPath& path,
                                  const Query& query) const {
  ASSIGN_OR_RETURN(api::ListOptions options, ListOptionsFrom(query));
  const bool table = WantsTable(request.Header("accept"));
  if (*path.type != api::PodDisruptionBudgets() && !table) {
    ASSIGN_OR_RETURN(store::SharedList shared, store_.ListShared(*path.type, path.ns, options));
    return TextResponse(200, ListText(*path.type, shared, *texts_));
  }
  ASSIGN_OR_RETURN(Json list, store_.List(*path.type, path.ns, options));
  if (!list.contains("items") || !list["items"].is_array()) list["items"] = Json::array();
  if (*path.type == api::PodDisruptionBudgets()) {
    for (Json& item : list["items"]) item = BudgetWithStatus(std::move(item));
  }
  if (table) return JsonResponse(200, ListToTable(*path.type, list, clock_.Now()), {});
  return JsonResponse(200, list, {});
}

Duration Router::WatchLifetime() const {
  std::lock_guard<std::mutex> lock(random_mu_);
  double factor = 1.0 + std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  return std::chrono::duration_cast<Duration>(options_.min_request_timeout * factor);
}

Result<HttpResponse> Router::Watch(const HttpRequest& request, const ApiPath& path,
                                   const Query& query) const {
  api::WatchOptions options;
  ASSIGN_OR_RETURN(api::ListOptions list_options, ListOptionsFrom(query));
  options.label_selector = list_options.label_selector;
  options.field_selector = list_options.field_selector;
  options.resource_version = query.Get("resourceVersion");
  ASSIGN_OR_RETURN(options.allow_bookmarks, query.GetBool("allowWatchBookmarks"));
  ASSIGN_OR_RETURN(bool initial_events, query.GetBool("sendInitialEvents"));
  ASSIGN_OR_RETURN(std::optional<long long> timeout_seconds, query.GetInt("timeoutSeconds"));
  std::optional<Duration> timeout;
  if (timeout_seconds && *timeout_seconds > 0) timeout = std::chrono::seconds(*timeout_seconds);
  if (!timeout && options_.min_request_timeout > Duration::zero()) timeout = WatchLifetime();
  bool table = WantsTable(request.Header("accept"));
  const api::ResourceType& type = *path.type;
  // An older served version: each object converted back to it (older_version.cc).
  const api::ServedVersion* older = type.OlderVersion(path.version);
  void (*convert)(Json&) = older != nullptr && !table ? older->from_stored : nullptr;

  std::string prelude;
  if (initial_events) {
    // The watch-list protocol (sendInitialEvents=true): ADDED for the current state, a BOOKMARK
    // annotated k8s.io/initial-events-end, then every change after the listed version.
    if (query.Get("resourceVersionMatch") != "NotOlderThan") {
      return Status(Code::kInvalid,
                    "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    Json{{"kind", "ListOptions"},
                         {"group", "meta.k8s.io"},
                         {"causes",
                          {{{"reason", "FieldValueForbidden"},
                            {"message",
                             "Forbidden: sendInitialEvents requires setting "
                             "resourceVersionMatch to NotOlderThan"},
                            {"field", "resourceVersionMatch"}}}}});
    }
    ASSIGN_OR_RETURN(Json list, store_.List(type, path.ns, list_options));
    bool first = true;
    for (Json& item : list["items"]) {  // in place: the list is this request's own copy
      if (convert) convert(item);
      prelude += WatchLine("ADDED", table ? ObjectToTable(type, item, clock_.Now(), first) : item);
      first = false;
    }
    std::string rv = list["metadata"].value("resourceVersion", "");
    prelude += WatchLine(
        "BOOKMARK",
        {{"kind", type.kind},
         {"apiVersion", type.ApiVersion()},
         {"metadata",
          {{"resourceVersion", rv}, {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}});
    options.resource_version = rv;
  }
  auto watch = store_.Watch(type, path.ns, options);
  HttpResponse response;
  if (!watch.ok()) {
    if (watch.status().code() != Code::kExpired) return watch.status();
    // An expired version is a 200 stream holding one ERROR event (410 Expired), as the real
    // server answers.
    Json status = watch.status().ToStatusJson();
    status.erase("details");
    response.stream =
        std::make_shared<WatchStream>(nullptr, type, table, clock_, timeout,
                                      prelude + WatchLine("ERROR", status), texts_, convert);
    return response;
  }
  response.stream = std::make_shared<WatchStream>(std::move(watch).value(), type, table, clock_,
                                                  timeout, std::move(prelude), texts_, convert);
  return response;
}

Result<HttpResponse> Router::Create(const HttpRequest& request, const ApiPath& path,
                                    const Query& query) const {
  DecodedWrite w;
  RETURN_IF_ERROR(DecodeWrite(request, path, query, &w));
  return WriteResponse(201, store_.Create(*path.type, path.ns, std::move(w.object), w.options),
                       w.warnings);
}

Result<HttpResponse> Router::Update(const HttpRequest& request, const ApiPath& path,
                                    const Query& query) const {
  DecodedWrite w;
  RETURN_IF_ERROR(DecodeWrite(request, path, query, &w));
  return WriteResponse(
      200, store_.Update(*path.type, path.ns, std::move(w.object), SubresourceOf(path), w.options),
      w.warnings);
}

Result<HttpResponse> Router::Patch(const HttpRequest& request, const ApiPath& path,
                                   const Query& query) const {
  std::string content_type = request.Header("content-type");
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.pop_back();
  const api::ResourceType& type = *path.type;
  bool custom = type.IsCustom();
  api::PatchType patch_type;
  bool apply = false;
  if (content_type == "application/merge-patch+json") {
    patch_type = api::PatchType::kMerge;
  } else if (content_type == "application/json-patch+json") {
    patch_type = api::PatchType::kJson;
  } else if (content_type == "application/strategic-merge-patch+json" && !custom) {
    patch_type = api::PatchType::kStrategicMerge;
  } else if (content_type == "application/apply-patch+yaml") {
    patch_type = api::PatchType::kMerge;
    apply = true;
  } else {
    return Status(Code::kUnsupportedMediaType,
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json-patch+json, application/merge-patch+json, "
                  "application/apply-patch+yaml" +
                      std::string(custom ? "" : ", application/strategic-merge-patch+json"));
  }
  ASSIGN_OR_RETURN(FieldValidation mode, ParseFieldValidation(query.Get("fieldValidation")));
  RETURN_IF_ERROR(CheckPatchOptions(query, apply));
  std::vector<std::string> warnings;
  Json patch;
  if (patch_type == api::PatchType::kJson) {
    try {
      patch = Json::parse(request.body);
    } catch (const Json::exception& e) {
      return BadRequestError(std::string("json: cannot unmarshal the JSON patch: ") + e.what());
    }
    if (!patch.is_array()) {
      return BadRequestError("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    }
  } else {
    ASSIGN_OR_RETURN(patch, DecodeBody(type, request.body, mode, &warnings));
  }
  api::WriteOptions options;
  ASSIGN_OR_RETURN(options.dry_run, DryRun(query));
  options.field_manager = ManagerOf(request, query);
  options.warnings = &warnings;
  if (apply) {
    // Server-side apply (api/managed_fields.h): 201 when it created the object.
    ASSIGN_OR_RETURN(options.force, query.GetBool("force"));
    if (!patch.contains("metadata") || !patch["metadata"].is_object()) {
      patch["metadata"] = Json::object();
    }
    patch["metadata"]["name"] = path.name;
    RETURN_IF_ERROR(CheckIdentity(type, patch, path, request.body));
    bool created = false;
    auto applied =
        store_.Apply(type, path.ns, path.name, patch, SubresourceOf(path), options, &created);
    return WriteResponse(created ? 201 : 200, applied, warnings);
  }
  return WriteResponse(
      200, store_.Patch(type, path.ns, path.name, patch_type, patch, SubresourceOf(path), options),
      warnings);
}

Result<api::DeleteOptions> DeleteOptionsFrom(const Json& body, const Query& query) {
  api::DeleteOptions options;
  const Json& policy_field =
      body.contains("propagationPolicy") ? body["propagationPolicy"] : Json();
  if (!policy_field.is_null() && !policy_field.is_string()) {
    return BadRequestError("json: cannot unmarshal " + std::string(policy_field.type_name()) +
                           " into Go struct field DeleteOptions.propagationPolicy of type "
                           "v1.DeletionPropagation");
  }
  options.propagation_policy =
      policy_field.is_string() ? policy_field.get<std::string>() : query.Get("propagationPolicy");
  if (body.contains("orphanDependents") && body["orphanDependents"].is_boolean() &&
      options.propagation_policy.empty()) {
    options.propagation_policy = body["orphanDependents"].get<bool>() ? "Orphan" : "Background";
  }
  const std::string& policy = options.propagation_policy;
  if (!policy.empty() && policy != "Foreground" && policy != "Background" && policy != "Orphan") {
    std::string detail = "Unsupported value: \"" + policy +
                         "\": supported values: \"Foreground\", \"Background\", \"Orphan\"";
    return Status(Code::kInvalid,
                  "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: " + detail,
                  Json{{"kind", "DeleteOptions"},
                       {"group", "meta.k8s.io"},
                       {"causes",
                        {{{"reason", "FieldValueNotSupported"},
                          {"message", detail},
                          {"field", "propagationPolicy"}}}}});
  }
  if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
    options.grace_period_seconds = body["gracePeriodSeconds"].get<std::int64_t>();
  } else {
    ASSIGN_OR_RETURN(std::optional<long long> grace, query.GetInt("gracePeriodSeconds"));
    if (grace) options.grace_period_seconds = *grace;
  }
  if (body.contains("preconditions") && body["preconditions"].is_object()) {
    const Json& pre = body["preconditions"];
    if (pre.contains("uid") && pre["uid"].is_string()) options.precondition_uid = pre["uid"];
    if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string()) {
      options.precondition_resource_version = pre["resourceVersion"];
    }
  }
  ASSIGN_OR_RETURN(options.dry_run, DryRun(query));
  if (body.contains("dryRun") && body["dryRun"].is_array()) {
    for (const auto& v : body["dryRun"]) options.dry_run = options.dry_run || v == "All";
  }
  return options;
}

Result<HttpResponse> Router::Delete(const HttpRequest& request, const ApiPath& path,
                                    const Query& query) const {
  Json body = Json::object();
  if (!request.body.empty()) {
    try {
      body = Json::parse(request.body);
    } catch (const Json::exception& e) {
      return BadRequestError(std::string("the body of the request is not a DeleteOptions: ") +
                             e.what());
    }
    if (!body.is_object()) return BadRequestError("the body of the request is not a DeleteOptions");
  }
  ASSIGN_OR_RETURN(api::DeleteOptions options, DeleteOptionsFrom(body, query));
  ASSIGN_OR_RETURN(Json result, store_.Delete(*path.type, path.ns, path.name, options));
  return JsonResponse(200, result, {});
}

Result<HttpResponse> Router::DeleteCollection(const HttpRequest& request, const ApiPath& path,
                                              const Query& query) const {
  ASSIGN_OR_RETURN(api::ListOptions list_options, ListOptionsFrom(query));
  api::DeleteOptions options;
  options.propagation_policy = query.Get("propagationPolicy");
  if (!request.body.empty()) {
    try {
      Json body = Json::parse(request.body);
      if (body.is_object()) {
        options.propagation_policy = body.value("propagationPolicy", options.propagation_policy);
      }
    } catch (const Json::exception& e) {
      return BadRequestError(std::string("the body of the request is not a DeleteOptions: ") +
                             e.what());
    }
  }
  ASSIGN_OR_RETURN(options.dry_run, DryRun(query));
  ASSIGN_OR_RETURN(Json result,
                   store_.DeleteCollection(*path.type, path.ns, list_options, options));
  return JsonResponse(200, result, {});
}

}  // namespace pjemu::apiserver
