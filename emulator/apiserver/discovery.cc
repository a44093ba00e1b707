#include "emulator/apiserver/discovery.h"

#include <algorithm>
#include <set>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {
namespace {

const std::vector<std::string> kVerbs = {"create", "delete", "deletecollection", "get",
                                         "list",   "patch",  "update",           "watch"};
const std::vector<std::string> kSubVerbs = {"get", "patch", "update"};

std::vector<std::string> CategoriesOf(const api::ResourceType& t) {
  if (t.group.empty() && (t.plural == "pods" || t.plural == "services")) return {"all"};
  return {};
}

// Group versions in table order: "" first (core), then the named groups.
std::vector<std::pair<std::string, std::string>> GroupVersions() {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : api::AllResources()) {
    if (seen.insert({r.group, r.version}).second) out.emplace_back(r.group, r.version);
    for (const api::ServedVersion& older : r.older_versions) {
      if (seen.insert({r.group, older.version}).second) out.emplace_back(r.group, older.version);
    }
  }
  return out;
}

Json ResourceList(const std::string& group, const std::string& version) {
  Json resources = Json::array();
  for (const auto& r : api::AllResources()) {
    if (r.group != group || !r.Serves(version)) continue;
    Json res = {{"name", r.plural},
                {"singularName", r.singular},
                {"namespaced", r.namespaced},
                {"kind", r.kind},
                {"verbs", kVerbs}};
    if (!r.short_names.empty()) res["shortNames"] = r.short_names;
    auto categories = CategoriesOf(r);
    if (!categories.empty()) res["categories"] = categories;
    resources.push_back(res);
    auto sub = [&](const std::string& name, const std::string& kind, const std::string& g,
                   const std::string& v, std::vector<std::string> verbs) {
      Json s = {{"name", r.plural + "/" + name},
                {"singularName", ""},
                {"namespaced", r.namespaced},
                {"kind", kind},
                {"verbs", verbs}};
      if (!g.empty()) s["group"] = g;
      if (!v.empty()) s["version"] = v;
      resources.push_back(s);
    };
    if (r.plural == "pods") {
      sub("binding", "Binding", "", "", {"create"});
      sub("eviction", "Eviction", "policy", "v1", {"create"});
      sub("log", "Pod", "", "", {"get"});
    }
    if (r.scale != nullptr) sub("scale", "Scale", "autoscaling", "v1", kSubVerbs);
    if (r.has_status) sub("status", r.kind, "", "", kSubVerbs);
  }
  std::string gv = group.empty() ? version : group + "/" + version;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", gv},
          {"resources", resources}};
}

Json GroupEntry(const std::string& group) {
  Json versions = Json::array();
  for (const auto& [g, v] : GroupVersions()) {
    if (g == group) versions.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
  }
  return {{"name", group}, {"versions", versions}, {"preferredVersion", versions[0]}};
}

Json AggregatedResource(const api::ResourceType& r, const std::string& version) {
  Json res = {{"resource", r.plural},
              {"responseKind", {{"group", r.group}, {"version", version}, {"kind", r.kind}}},
              {"scope", r.namespaced ? "Namespaced" : "Cluster"},
              {"singularResource", r.singular},
              {"verbs", kVerbs}};
  if (!r.short_names.empty()) res["shortNames"] = r.short_names;
  auto categories = CategoriesOf(r);
  if (!categories.empty()) res["categories"] = categories;
  Json subs = Json::array();
  auto sub = [&](const std::string& name, Json kind, std::vector<std::string> verbs) {
    subs.push_back({{"subresource", name}, {"responseKind", kind}, {"verbs", verbs}});
  };
  if (r.plural == "pods") {
    sub("binding", {{"group", ""}, {"version", "v1"}, {"kind", "Binding"}}, {"create"});
    sub("eviction", {{"group", "policy"}, {"version", "v1"}, {"kind", "Eviction"}}, {"create"});
    sub("log", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}, {"get"});
  }
  if (r.scale != nullptr) {
    sub("scale", {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}, kSubVerbs);
  }
  if (r.has_status) {
    sub("status", {{"group", r.group}, {"version", version}, {"kind", r.kind}}, kSubVerbs);
  }
  if (!subs.empty()) res["subresources"] = subs;
  return res;
}

// One APIGroupDiscovery item per group; `core` selects the "" group (for /api) or the others.
Json AggregatedList(bool core, const std::string& api_version) {
  Json items = Json::array();
  std::vector<std::string> groups;
  for (const auto& [g, v] : GroupVersions()) {
    if ((g.empty() == core) && std::find(groups.begin(), groups.end(), g) == groups.end()) {
      groups.push_back(g);
    }
  }
  for (const auto& g : groups) {
    Json versions = Json::array();
    for (const auto& [gg, v] : GroupVersions()) {
      if (gg != g) continue;
      Json resources = Json::array();
      for (const auto& r : api::AllResources()) {
        if (r.group == g && r.Serves(v)) resources.push_back(AggregatedResource(r, v));
      }
      versions.push_back({{"version", v}, {"freshness", "Current"}, {"resources", resources}});
    }
    Json metadata = Json::object();
    if (!g.empty()) metadata["name"] = g;
    items.push_back({{"metadata", metadata}, {"versions", versions}});
  }
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", api_version},
          {"metadata", Json::object()},
          {"items", items}};
}

// metrics.k8s.io/v1beta1 (metrics-server's APIService) in the aggregated format.
Json AggregatedMetricsGroup() {
  auto resource = [](const char* plural, const char* kind, bool namespaced) {
    return Json{{"resource", plural},
                {"responseKind", {{"group", "metrics.k8s.io"}, {"version", "v1beta1"},
                                  {"kind", kind}}},
                {"scope", namespaced ? "Namespaced" : "Cluster"},
                {"singularResource", ""},
                {"verbs", {"get", "list"}}};
  };
  Json version = {{"version", "v1beta1"},
                  {"freshness", "Current"},
                  {"resources", {resource("nodes", "NodeMetrics", false),
                                 resource("pods", "PodMetrics", true)}}};
  return {{"metadata", {{"name", "metrics.k8s.io"}}}, {"versions", Json::array({version})}};
}

// "v2", "v2beta1", or "" (classic) from the Accept header (`as=APIGroupDiscoveryList;v=...`).
std::string AggregatedVersion(const std::string& accept) {
  if (accept.find("as=APIGroupDiscoveryList") == std::string::npos) return "";
  if (accept.find("v=v2;") != std::string::npos) return "v2";
  if (accept.find("v=v2beta1;") != std::string::npos) return "v2beta1";
  return "";
}

}  // namespace

std::optional<HttpResponse> ServeDiscovery(const std::string& path, const std::string& accept,
                                           bool metrics) {
  if (path == "/api" || path == "/apis") {
    bool core = path == "/api";
    std::string aggregated = AggregatedVersion(accept);
    if (!aggregated.empty()) {
      Json list = AggregatedList(core, "apidiscovery.k8s.io/" + aggregated);
      if (metrics && !core) list["items"].push_back(AggregatedMetricsGroup());
      return JsonAnswer(
          list,
          "application/json;g=apidiscovery.k8s.io;v=" + aggregated + ";as=APIGroupDiscoveryList");
    }
    if (core) {
      return JsonAnswer(
          {{"kind", "APIVersions"},
           {"versions", {"v1"}},
           {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", ""}}}}});
    }
    Json groups = Json::array();
    std::set<std::string> seen;
    for (const auto& [g, v] : GroupVersions()) {
      if (!g.empty() && seen.insert(g).second) groups.push_back(GroupEntry(g));
    }
    if (metrics) {
      Json version = {{"groupVersion", "metrics.k8s.io/v1beta1"}, {"version", "v1beta1"}};
      groups.push_back({{"name", "metrics.k8s.io"},
                        {"versions", Json::array({version})},
                        {"preferredVersion", version}});
    }
    return JsonAnswer({{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}});
  }
  for (const auto& [g, v] : GroupVersions()) {
    std::string gv_path = g.empty() ? "/api/" + v : "/apis/" + g + "/" + v;
    if (path == gv_path) return JsonAnswer(ResourceList(g, v));
    if (!g.empty() && path == "/apis/" + g) {
      Json group = GroupEntry(g);
      group["kind"] = "APIGroup";
      group["apiVersion"] = "v1";
      return JsonAnswer(group);
    }
  }
  return std::nullopt;
}

}  // namespace pjemu::apiserver
