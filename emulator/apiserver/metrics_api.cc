#include "emulator/apiserver/metrics_api.h"

#include <cstdio>
#include <vector>

#include "emulator/api/resource_quantity.h"
#include "emulator/apiserver/paths.h"
#include "emulator/apiserver/router.h"

namespace pjemu::apiserver {
namespace {

const std::string kPrefix = std::string("/apis/") + kMetricsGroup;
const std::string kVersionPrefix = kPrefix + "/" + kMetricsVersion;
const std::string kApiVersion = std::string(kMetricsGroup) + "/" + kMetricsVersion;

Json Usage(std::int64_t nanocores, std::int64_t bytes) {
  return {{"cpu", FormatNanocores(nanocores)},
          {"memory", api::Quantity::FromValue(bytes, api::QuantityFormat::kBinarySI)
                         .CanonicalString()}};
}

Json Meta(const Json& object, Time now) {
  const Json& m = object["metadata"];
  Json meta = {{"name", m.value("name", "")}, {"creationTimestamp", FormatTime(now)}};
  if (m.contains("namespace")) meta["namespace"] = m["namespace"];
  if (m.contains("labels")) meta["labels"] = m["labels"];
  return meta;
}

bool Running(const Json& pod) {
  return pod.value("status", Json::object()).value("phase", "") == "Running";
}

class MetricsApi {
 public:
  MetricsApi(const store::Store& store, const api::ResourceUsage& usage, const Clock& clock)
      : store_(store), usage_(usage), clock_(clock) {}

  HttpResponse Handle(const HttpRequest& request, bool authorized) const {
    if (!authorized) return ErrorResponse(Status(Code::kUnauthorized, "Unauthorized"));
    std::string raw = request.target.substr(0, request.target.find('?'));
    auto path = PercentDecode(raw, false);
    if (!path) return ErrorResponse(Status(Code::kBadRequest, "malformed path"));
    while (path->size() > 1 && path->back() == '/') path->pop_back();
    auto query = ParseQuery(request.target.find('?') == std::string::npos
                                ? std::string_view()
                                : std::string_view(request.target).substr(request.target.find('?') + 1));
    if (!query.ok()) return ErrorResponse(query.status());
    if (request.method != "GET" && request.method != "HEAD") {
      return ErrorResponse(Status(Code::kMethodNotAllowed,
                                  "the server does not allow this method on the requested resource"));
    }
    auto answer = Route(*path, *query);
    if (!answer.ok()) return ErrorResponse(answer.status());
    return JsonAnswer(*answer);
  }

 private:
  Result<Json> Route(const std::string& path, const Query& query) const {
    if (path == kPrefix) return Group();
    if (path == kVersionPrefix) return Resources();
    if (path.rfind(kVersionPrefix + "/", 0) != 0) return UnknownPathError();
    std::vector<std::string> parts;
    std::string rest = path.substr(kVersionPrefix.size() + 1);
    for (std::size_t start = 0;;) {
      std::size_t slash = rest.find('/', start);
      parts.push_back(rest.substr(start, slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    for (const std::string& p : parts) RETURN_IF_ERROR(ValidatePathSegment(p, "name"));
    api::ListOptions list;
    list.label_selector = query.Get("labelSelector");
    list.field_selector = query.Get("fieldSelector");
    if (parts[0] == "nodes" && parts.size() <= 2) {
      return parts.size() == 1 ? NodeList(list) : NodeGet(parts[1]);
    }
    if (parts[0] == "pods" && parts.size() == 1) return PodList("", list);
    if (parts[0] == "namespaces" && parts.size() >= 3 && parts.size() <= 4 && parts[2] == "pods") {
      return parts.size() == 3 ? PodList(parts[1], list) : PodGet(parts[1], parts[3]);
    }
    return UnknownPathError();
  }

  static Json Group() {
    Json version = {{"groupVersion", kApiVersion}, {"version", kMetricsVersion}};
    return {{"kind", "APIGroup"},
            {"apiVersion", "v1"},
            {"name", kMetricsGroup},
            {"versions", Json::array({version})},
            {"preferredVersion", version}};
  }

  static Json Resources() {
    auto resource = [](const char* name, const char* kind, bool namespaced) {
      return Json{{"name", name},
                  {"singularName", ""},
                  {"namespaced", namespaced},
                  {"kind", kind},
                  {"verbs", {"get", "list"}}};
    };
    return {{"kind", "APIResourceList"},
            {"apiVersion", "v1"},
            {"groupVersion", kApiVersion},
            {"resources", {resource("nodes", "NodeMetrics", false),
                           resource("pods", "PodMetrics", true)}}};
  }

  static Json ListOf(const char* kind, Json items) {
    return {{"kind", kind},
            {"apiVersion", kApiVersion},
            {"metadata", Json::object()},
            {"items", std::move(items)}};
  }

  std::optional<Json> PodMetrics(const Json& pod, Time now) const {
    if (!Running(pod)) return std::nullopt;
    const Json& m = pod["metadata"];
    auto reading = usage_.Pod(m.value("namespace", ""), m.value("name", ""));
    if (!reading || reading->containers.empty()) return std::nullopt;
    Json containers = Json::array();
    for (const api::ContainerUsage& c : reading->containers) {
      containers.push_back({{"name", c.name}, {"usage", Usage(c.cpu_nanocores, c.memory_bytes)}});
    }
    return Json{{"kind", "PodMetrics"},
                {"apiVersion", kApiVersion},
                {"metadata", Meta(pod, now)},
                {"timestamp", FormatTime(reading->timestamp)},
                {"window", FormatGoDuration(reading->window)},
                {"containers", containers}};
  }

  std::optional<Json> NodeMetrics(const Json& node, Time now) const {
    auto reading = usage_.Node(node["metadata"].value("name", ""));
    if (!reading || reading->containers.empty()) return std::nullopt;
    const api::ContainerUsage& total = reading->containers.front();
    return Json{{"kind", "NodeMetrics"},
                {"apiVersion", kApiVersion},
                {"metadata", Meta(node, now)},
                {"timestamp", FormatTime(reading->timestamp)},
                {"window", FormatGoDuration(reading->window)},
                {"usage", Usage(total.cpu_nanocores, total.memory_bytes)}};
  }

  Result<Json> PodList(const std::string& ns, const api::ListOptions& options) const {
    ASSIGN_OR_RETURN(store::SharedList pods, store_.ListShared(api::Pods(), ns, options));
    Json items = Json::array();
    const Time now = clock_.Now();
    for (const auto& pod : pods.items) {
      if (auto m = PodMetrics(*pod, now)) items.push_back(std::move(*m));
    }
    return ListOf("PodMetricsList", std::move(items));
  }

  Result<Json> PodGet(const std::string& ns, const std::string& name) const {
    auto pod = store_.GetShared(api::Pods(), ns, name);
    if (pod.ok()) {
      if (auto m = PodMetrics(**pod, clock_.Now())) return *m;
    }
    return Status(Code::kNotFound,
                  "podmetrics.metrics.k8s.io \"" + ns + "/" + name + "\" not found",
                  Json{{"name", ns + "/" + name}, {"group", kMetricsGroup}, {"kind", "podmetrics"}});
  }

  Result<Json> NodeList(const api::ListOptions& options) const {
    ASSIGN_OR_RETURN(store::SharedList nodes, store_.ListShared(api::Nodes(), "", options));
    Json items = Json::array();
    const Time now = clock_.Now();
    for (const auto& node : nodes.items) {
      if (auto m = NodeMetrics(*node, now)) items.push_back(std::move(*m));
    }
    return ListOf("NodeMetricsList", std::move(items));
  }

  Result<Json> NodeGet(const std::string& name) const {
    auto node = store_.GetShared(api::Nodes(), "", name);
    if (node.ok()) {
      if (auto m = NodeMetrics(**node, clock_.Now())) return *m;
    }
    return Status(Code::kNotFound, "nodemetrics.metrics.k8s.io \"" + name + "\" not found",
                  Json{{"name", name}, {"group", kMetricsGroup}, {"kind", "nodemetrics"}});
  }

  const store::Store& store_;
  const api::ResourceUsage& usage_;
  const Clock& clock_;
};

}  // namespace

std::string FormatNanocores(std::int64_t nanocores) {
  if (nanocores == 0) return "0";
  static const char* kSuffixes[] = {"n", "u", "m", ""};
  std::int64_t value = nanocores;
  int i = 0;
  while (i < 3 && value % 1000 == 0) {
    value /= 1000;
    ++i;
  }
  return std::to_string(value) + kSuffixes[i];
}

Mount MakeMetricsMount(const store::Store& store, const api::ResourceUsage& usage,
                       const Clock& clock) {
  auto api = std::make_shared<MetricsApi>(store, usage, clock);
  return Mount{kPrefix, [api](const HttpRequest& request, bool authorized) {
                 return api->Handle(request, authorized);
               }};
}

}  // namespace pjemu::apiserver
