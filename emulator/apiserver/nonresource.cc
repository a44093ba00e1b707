#include "emulator/apiserver/nonresource.h"

#include <set>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {
namespace {

HttpResponse Text(std::string body, std::string type = "text/plain; charset=utf-8") {
  HttpResponse response;
  response.content_type = std::move(type);
  response.body = std::move(body);
  return response;
}

// Protobuf length-delimited field `number` holding `bytes` (lengths here stay below 128).
std::string ProtoField(int number, const std::string& bytes) {
  std::string out;
  out.push_back(static_cast<char>((number << 3) | 2));
  out.push_back(static_cast<char>(bytes.size()));
  return out + bytes;
}

Json VersionInfo(const std::string& git_version) {
  // "v1.30.0[-suffix]" -> major "1", minor "30".
  std::string v = git_version.size() > 1 && git_version[0] == 'v' ? git_version.substr(1) : "";
  std::size_t dot1 = v.find('.');
  std::size_t dot2 = dot1 == std::string::npos ? dot1 : v.find('.', dot1 + 1);
  std::string major = dot1 == std::string::npos ? "" : v.substr(0, dot1);
  std::string minor = dot2 == std::string::npos ? "" : v.substr(dot1 + 1, dot2 - dot1 - 1);
  return {{"major", major},
          {"minor", minor},
          {"gitVersion", git_version},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2024-01-01T00:00:00Z"},
          {"goVersion", "go1.22.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

std::string GroupVersionKey(const api::ResourceType& r) {
  return r.group.empty() ? "api/" + r.version : "apis/" + r.group + "/" + r.version;
}

// A PATCH operation per item path, tagged with the GVK and the fieldValidation parameter: what
// cli-runtime's query-param verifier looks for. Custom resources list no
// strategic-merge patch, which the real server refuses for them.
Json OpenApiV3Document(const std::string& key, const std::string& git_version) {
  Json paths = Json::object();
  for (const auto& r : api::AllResources()) {
    if (GroupVersionKey(r) != key) continue;
    std::string prefix = "/" + key + (r.namespaced ? "/namespaces/{namespace}/" : "/");
    Json content = {{"application/merge-patch+json", Json::object()},
                    {"application/json-patch+json", Json::object()},
                    {"application/apply-patch+yaml", Json::object()}};
    if (r.group.empty()) content["application/strategic-merge-patch+json"] = Json::object();
    Json patch = {
        {"x-kubernetes-group-version-kind",
         {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
        {"parameters",
         {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}}}},
        {"requestBody", {{"content", content}}},
        {"responses", {{"200", {{"description", "OK"}}}}}};
    paths[prefix + r.plural + "/{name}"] = {{"patch", patch}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", git_version}}},
          {"paths", paths}};
}

}  // namespace

std::string MinimalOpenApiV2(const std::string& git_version) {
  return ProtoField(1, "2.0") +
         ProtoField(2, ProtoField(1, "Kubernetes") + ProtoField(2, git_version.substr(0, 100)));
}

std::optional<HttpResponse> ServeNonResource(const std::string& path,
                                             const std::string& git_version) {
  if (path == "/healthz" || path == "/livez" || path == "/readyz") return Text("ok");
  if (path == "/version") return Text(VersionInfo(git_version).dump(), "application/json");
  if (path == "/openapi/v2" || path == "/swagger-2.0.0.pb-v1") {
    return Text(MinimalOpenApiV2(git_version), "application/octet-stream");
  }
  if (path == "/openapi/v3") {
    Json paths = Json::object();
    std::set<std::string> keys;
    for (const auto& r : api::AllResources()) keys.insert(GroupVersionKey(r));
    for (const auto& key : keys) {
      paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + git_version}};
    }
    return Text(Json{{"paths", paths}}.dump(), "application/json");
  }
  const std::string v3 = "/openapi/v3/";
  if (path.rfind(v3, 0) == 0) {
    std::string key = path.substr(v3.size());
    for (const auto& r : api::AllResources()) {
      if (GroupVersionKey(r) == key) {
        return Text(OpenApiV3Document(key, git_version).dump(), "application/json");
      }
    }
  }
  return std::nullopt;
}

}  // namespace pjemu::apiserver
