#include "emulator/ui/console.h"

#include <chrono>
#include <filesystem>
#include <memory>

#include "emulator/api/resources.h"
#include "emulator/ui/assets.h"
#include "emulator/ui/manifest_check.h"
#include "emulator/ui/metrics_reader.h"
#include "emulator/ui/tfevents.h"
#include "emulator/ui/workloads.h"

namespace pjemu::ui {
namespace {

using apiserver::HttpRequest;
using apiserver::HttpResponse;

constexpr std::string_view kPrefix = "/ui/";

HttpResponse JsonResponse(int status, const Json& body) {
  HttpResponse r = apiserver::JsonAnswer(body);
  r.status = status;
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// The Kubernetes Status shape the rest of the server answers errors with.
HttpResponse StatusResponse(int code, const std::string& reason, const std::string& message) {
  return JsonResponse(code, {{"kind", "Status"},
                             {"apiVersion", "v1"},
                             {"metadata", Json::object()},
                             {"status", "Failure"},
                             {"message", message},
                             {"reason", reason},
                             {"code", code}});
}

HttpResponse NotFound(const std::string& what) {
  return StatusResponse(404, "NotFound", what + " not found");
}

// DNS-1123 subdomain (pod names) / label (namespaces): lower-case alphanumerics, '-' and '.'
// (subdomain only), starting and ending alphanumeric.
bool ValidName(std::string_view name, bool allow_dots, std::size_t max_len) {
  if (name.empty() || name.size() > max_len) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && !(allow_dots && c == '.')) return false;
  }
  return true;
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

double Seconds(Time t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

// The metrics file of a pod: the path the cluster names, else the one metrics-rank<R>.jsonl
// beside it (a worker's rank is not 0).
std::string FindMetricsFile(const std::string& named) {
  std::error_code ec;
  if (named.empty() || std::filesystem::exists(named, ec)) return named;
  std::filesystem::path dir = std::filesystem::path(named).parent_path();
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (file.rfind("metrics-rank", 0) == 0 && it->path().extension() == ".jsonl") {
      return it->path().string();
    }
  }
  return named;
}

class Console {
 public:
  Console(store::Store& store, ConsoleOptions options)
      : store_(store), options_(std::move(options)) {}

  HttpResponse Handle(const HttpRequest& request, bool authorized) const {
    std::string path = request.target.substr(0, request.target.find('?'));
    std::string rest = path.substr(kPrefix.size());
    if (rest.rfind("api/", 0) == 0 || rest == "api") {
      if (!authorized) return StatusResponse(401, "Unauthorized", "Unauthorized");
      return Api(request, rest.substr(std::min<std::size_t>(4, rest.size())));
    }
    if (request.method != "GET" && request.method != "HEAD") {
      return StatusResponse(405, "MethodNotAllowed", "only GET is served under /ui/");
    }
    const Asset* asset = FindAsset(rest.empty() ? "index.html" : rest);
    if (asset == nullptr) return NotFound("/ui/" + rest);
    HttpResponse r;
    r.content_type = std::string(asset->content_type);
    r.body = std::string(asset->data);
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                           "frame-ancestors 'none'");
    return r;
  }

 private:
  HttpResponse Api(const HttpRequest& request, const std::string& rest) const {
    if (rest == "validate") {
      if (request.method != "POST") {
        return StatusResponse(405, "MethodNotAllowed", "POST the YAML text");
      }
      return JsonResponse(200, CheckManifest(request.body));
    }
    if (request.method != "GET" && request.method != "HEAD") {
      return StatusResponse(405, "MethodNotAllowed", "only GET is served here");
    }
    if (rest == "workloads") return JsonResponse(200, WorkloadTable(store_));
    // namespaces/{ns}/pods/{pod}/{metrics|resources}, namespaces/{ns}/tensorboards/{tb}/scalars,
    // namespaces/{ns}/{a job kind's plural}/{name}/tree
    std::vector<std::string> parts = Split(rest);
    const api::ResourceType* kind = parts.size() == 5 ? JobKind(parts[2]) : nullptr;
    if (parts.size() != 5 || parts[0] != "namespaces" ||
        (parts[2] != "pods" && parts[2] != "tensorboards" && kind == nullptr)) {
      return NotFound("/ui/api/" + rest);
    }
    const std::string& ns = parts[1];
    const std::string& name = parts[3];
    if (!ValidName(ns, false, 63) || !ValidName(name, true, 253)) {
      return StatusResponse(400, "BadRequest", "invalid namespace or pod name");
    }
    if (parts[2] == "tensorboards") {
      if (parts[4] != "scalars") return NotFound("/ui/api/" + rest);
      return Scalars(ns, name);
    }
    if (kind != nullptr) {
      if (parts[4] != "tree") return NotFound("/ui/api/" + rest);
      Result<Json> tree = OwnerTree(store_, *kind, ns, name);
      if (!tree.ok()) return NotFound(kind->PluralGroup() + " \"" + name + "\"");
      return JsonResponse(200, *tree);
    }
    auto pod = store_.Get(api::Pods(), ns, name);
    if (!pod.ok()) return NotFound("pods \"" + name + "\"");
    if (parts[4] == "metrics") return Metrics(*pod);
    if (parts[4] == "resources") return Resources(ns, name);
    if (parts[4] == "io") return Io(ns, name);
    return NotFound("/ui/api/" + rest);
  }

  // The job kind of a plural ("jobsets"), nullptr for any other.
  static const api::ResourceType* JobKind(const std::string& plural) {
    for (const api::ResourceType* type : api::WorkloadTypes()) {
      if (type->plural == plural) return type;
    }
    return nullptr;
  }

  HttpResponse Metrics(const Json& pod) const {
    std::string file = options_.metrics_path ? FindMetricsFile(options_.metrics_path(pod)) : "";
    Json body =
        file.empty()
            ? Json{{"steps", Json::array()}, {"epochs", Json::array()}, {"truncated", false}}
            : ReadMetrics(file, options_.max_metrics_bytes);
    body["trainer"] = !file.empty();
    return JsonResponse(200, body);
  }

  // The scalars of a TensorBoard's event files, from the host folders its controller resolved
  // (status.logDirs of the stored object; never a path from the request).
  HttpResponse Scalars(const std::string& ns, const std::string& name) const {
    auto board = store_.Get(api::TensorBoards(), ns, name);
    if (!board.ok()) return NotFound("tensorboards.tensorstack.dev \"" + name + "\"");
    std::vector<std::string> dirs, labels;
    Json status = board->value("status", Json::object());
    Json log_dirs = status.is_object() ? status.value("logDirs", Json::array()) : Json::array();
    if (!log_dirs.is_array()) log_dirs = Json::array();
    for (const Json& d : log_dirs) {
      if (!d.is_object() || !d.contains("path") || !d["path"].is_string()) continue;
      dirs.push_back(d["path"]);
      bool named = d.contains("source") && d["source"].is_string();
      labels.push_back(named ? d["source"] : d["path"]);
    }
    ScalarScan scan = ScanScalars(dirs, labels, options_.log_dir_limits);
    Json series = Json::array();
    for (const ScalarSeries& s : scan.series) {
      Json points = Json::array();
      for (const ScalarPoint& p : s.points) points.push_back(Json::array({p.step, p.value, p.wall_time}));
      series.push_back({{"tag", s.tag}, {"run", s.run}, {"thinned", s.thinned}, {"points", std::move(points)}});
    }
    Json body = {{"logDirs", std::move(log_dirs)},
                 {"files", scan.files.size()},
                 {"partial", scan.partial},
                 {"errors", scan.errors},
                 {"series", std::move(series)}};
    return JsonResponse(200, body);
  }

  HttpResponse Resources(const std::string& ns, const std::string& name) const {
    Json containers = Json::array();
    if (options_.usage) {
      for (const ContainerUsage& c : options_.usage(ns, name)) {
        Json points = Json::array();
        for (const UsagePoint& p : c.points) {
          Json point = Json::array({Seconds(p.time), p.cpu_cores, p.rss_bytes});
          if (p.gpu_memory_bytes >= 0) {  // [t, cores, rss, gpu %, gpu bytes] where NVML is
            point.push_back(p.gpu_util_percent);
            point.push_back(p.gpu_memory_bytes);
          }
          points.push_back(std::move(point));
        }
        containers.push_back({{"container", c.container}, {"points", std::move(points)}});
      }
    }
    return JsonResponse(200, {{"containers", std::move(containers)}});
  }

  // [time, rx, tx, read bytes, write bytes, reads, writes] per second, per container.
  HttpResponse Io(const std::string& ns, const std::string& name) const {
    Json containers = Json::array();
    if (options_.io) {
      for (const ContainerIo& c : options_.io(ns, name)) {
        Json points = Json::array();
        for (const IoPoint& p : c.points) {
          points.push_back(Json::array({Seconds(p.time), p.rx_bytes, p.tx_bytes, p.read_bytes,
                                        p.write_bytes, p.reads, p.writes}));
        }
        containers.push_back({{"container", c.container}, {"points", std::move(points)}});
      }
    }
    return JsonResponse(200, {{"containers", std::move(containers)}});
  }

  store::Store& store_;
  ConsoleOptions options_;
};

}  // namespace

const Asset* FindAsset(std::string_view path) {
  for (const Asset& asset : Assets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

apiserver::Mount MakeConsoleMount(store::Store& store, ConsoleOptions options) {
  auto console = std::make_shared<const Console>(store, std::move(options));
  return apiserver::Mount{std::string(kPrefix),
                          [console](const HttpRequest& request, bool authorized) {
                            return console->Handle(request, authorized);
                          }};
}

}  // namespace pjemu::ui
