// Router's subresources other than status: the autoscaling/v1 Scale of a type with scale paths
// (its row's ScalePaths, as its CRD declares them: spec.replicas <-> the spec replicas path,
// status.replicas <- the status replicas path, status.selector <- the label selector path) and
// pods/{name}/log.
#include "emulator/api/json_fields.h"
#include "emulator/api/managed_fields.h"
#include "emulator/apiserver/log_stream.h"
#include "emulator/apiserver/router.h"

namespace pjemu::apiserver {
namespace {

using api::FieldAt, api::JsonPathValue;

Json ScaleOf(const api::ResourceType& type, const Json& job) {
  const Json& meta = job["metadata"];
  Json scale_meta = Json::object();
  for (const char* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (meta.contains(k)) scale_meta[k] = meta[k];
  }
  const Json& active = JsonPathValue(job, type.scale->status_replicas);
  const Json& selector = JsonPathValue(job, type.scale->label_selector);
  Json status = {{"replicas", active.is_number_integer() ? active.get<std::int64_t>() : 0}};
  if (selector.is_string()) status["selector"] = selector;
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", scale_meta},
          {"spec", {{"replicas", ScaleSpecReplicas(type, job)}}},
          {"status", status}};
}

Status InvalidLogOption(const std::string& name, const std::string& field,
                        const std::string& detail) {
  return Status(
      Code::kInvalid, "PodLogOptions \"" + name + "\" is invalid: " + field + ": " + detail,
      Json{{"name", name},
           {"kind", "PodLogOptions"},
           {"causes", {{{"reason", "FieldValueInvalid"}, {"message", detail}, {"field", field}}}}});
}

}  // namespace

Result<HttpResponse> Router::Scale(const HttpRequest& request, const ApiPath& path,
                                   const Query& query) const {
  const api::ResourceType& type = *path.type;
  if (path.ns.empty()) return UnknownPathError();
  ASSIGN_OR_RETURN(Json job, store_.Get(type, path.ns, path.name));
  Json scale = ScaleOf(type, job);
  if (request.method == "GET") return JsonAnswer(scale);
  Json wanted;
  try {
    Json body = Json::parse(request.body);
    if (request.method == "PUT") {
      wanted = body;
      std::string rv = FieldAt(body, {"metadata", "resourceVersion"}).is_string()
                           ? FieldAt(body, {"metadata", "resourceVersion"}).get<std::string>()
                           : "";
      if (!rv.empty() && rv != scale["metadata"].value("resourceVersion", "")) {
        return ConflictError(type.PluralGroup(), path.name);
      }
    } else if (request.method == "PATCH") {
      std::string ct = request.Header("content-type");
      wanted = scale;
      if (ct.rfind("application/json-patch+json", 0) == 0) {
        wanted = scale.patch(body);
      } else if (ct.rfind("application/merge-patch+json", 0) == 0) {
        wanted.merge_patch(body);
      } else {
        return Status(Code::kUnsupportedMediaType,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json");
      }
    } else {
      return Status(Code::kMethodNotAllowed,
                    "the server does not allow this method on the requested resource");
    }
  } catch (const Json::exception& e) {
    return BadRequestError(std::string("Scale in version \"v1\" cannot be handled as a Scale: ") +
                           e.what());
  }
  const Json& replicas = FieldAt(wanted, {"spec", "replicas"});
  if (!replicas.is_number_integer() || replicas.get<std::int64_t>() < 0) {
    std::string detail =
        "Invalid value: " + replicas.dump() + ": must be greater than or equal to 0";
    return Status(Code::kInvalid,
                  "Scale.autoscaling \"" + path.name + "\" is invalid: spec.replicas: " + detail,
                  Json{{"name", path.name},
                       {"group", "autoscaling"},
                       {"kind", "Scale"},
                       {"causes",
                        {{{"reason", "FieldValueInvalid"},
                          {"message", detail},
                          {"field", "spec.replicas"}}}}});
  }
  api::WriteOptions options;
  options.dry_run = query.Get("dryRun") == "All";
  options.field_manager = query.Get("fieldManager");
  if (options.field_manager.empty()) {
    options.field_manager = api::ManagerFromUserAgent(request.Header("user-agent"));
  }
  Json patch = api::MergePatchAt(type.scale->spec_replicas, replicas);
  ASSIGN_OR_RETURN(Json updated, store_.Patch(type, path.ns, path.name, api::PatchType::kMerge,
                                              patch, api::Subresource::kNone, options));
  return JsonAnswer(ScaleOf(type, updated));
}

Result<HttpResponse> Router::Logs(const ApiPath& path, const Query& query) const {
  if (path.ns.empty()) return UnknownPathError();
  if (logs_ == nullptr) {
    RETURN_IF_ERROR(store_.Get(*path.type, path.ns, path.name).status());
    return BadRequestError("container logs are not available: this server has no log source");
  }
  api::LogRequest log_request{path.ns, path.name, query.Get("container"), false};
  ASSIGN_OR_RETURN(log_request.previous, query.GetBool("previous"));
  LogOptions options;
  ASSIGN_OR_RETURN(options.follow, query.GetBool("follow"));
  ASSIGN_OR_RETURN(options.timestamps, query.GetBool("timestamps"));
  ASSIGN_OR_RETURN(std::optional<long long> tail, query.GetInt("tailLines"));
  ASSIGN_OR_RETURN(std::optional<long long> since_seconds, query.GetInt("sinceSeconds"));
  ASSIGN_OR_RETURN(std::optional<long long> limit, query.GetInt("limitBytes"));
  if (tail && *tail < 0) {
    return InvalidLogOption(
        path.name, "tailLines",
        "Invalid value: " + std::to_string(*tail) + ": must be greater than or equal to 0");
  }
  if (limit && *limit < 1) {
    return InvalidLogOption(
        path.name, "limitBytes",
        "Invalid value: " + std::to_string(*limit) + ": must be greater than 0");
  }
  if (since_seconds && *since_seconds < 1) {
    return InvalidLogOption(
        path.name, "sinceSeconds",
        "Invalid value: " + std::to_string(*since_seconds) + ": must be greater than 0");
  }
  if (since_seconds && query.Has("sinceTime")) {
    return InvalidLogOption(
        path.name, "sinceSeconds",
        "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified");
  }
  options.tail_lines = tail;
  options.limit_bytes = limit;
  if (since_seconds) options.since = clock_.Now() - std::chrono::seconds(*since_seconds);
  if (query.Has("sinceTime")) {
    auto since = ParseTime(query.Get("sinceTime"));
    if (!since) {
      return BadRequestError("parsing time \"" + query.Get("sinceTime") +
                             "\" as \"2006-01-02T15:04:05Z07:00\": cannot parse");
    }
    options.since = since;
  }
  ASSIGN_OR_RETURN(api::LogFile file, logs_->Find(log_request));
  auto stream = std::make_shared<LogStream>(logs_, log_request, std::move(file), options);
  HttpResponse response;
  response.content_type = "text/plain";
  if (options.follow) {
    response.stream = stream;
    return response;
  }
  while (stream->Poll(&response.body)) {
  }
  return response;
}

}  // namespace pjemu::apiserver
