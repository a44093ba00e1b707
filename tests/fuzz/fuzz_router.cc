// Fuzz target: the HTTP request router (paths, query parsing, authentication, every verb and
// subresource, body decoding, Table output, log options) over a store holding a PyTorchJob and
// a Pod, once without a log source and once with a log and a token. Input: "METHOD TARGET\n",
// header lines "name: value\n", an empty line, then the body (none without the empty line).
// Invariants: no crash or escaping exception; the status is a valid HTTP code; a JSON error
// is a v1 Status; a server with a token answers 401 to every request without that token
// (except the health endpoints), whatever the path.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "emulator/apiserver/router.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

constexpr const char* kToken = "fuzz-t0ken";

// One CRI log file for every pod's container.
class OneFileLogs : public api::PodLogs {
 public:
  explicit OneFileLogs(store::Store& store) : store_(store) {}
  Result<api::LogFile> Find(const api::LogRequest& request) override {
    ASSIGN_OR_RETURN(Json pod, store_.Get(api::Pods(), request.ns, request.pod));
    (void)pod;
    return api::LogFile{LogPath(), false};
  }
  static const std::string& LogPath() {
    static const SampleLog file;
    return file.path;
  }

 private:
  // Written at the first pod log request of the process, removed when the process exits.
  struct SampleLog {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("pjemu-fuzz-router-" + std::to_string(getpid()) + ".log"))
                           .string();
    SampleLog() {
      std::ofstream out(path);
      out << "2024-01-01T00:00:00.000000001Z stdout F hello\n"
             "2024-01-01T00:00:01.000000000Z stderr P part\n"
             "2024-01-01T00:00:02.000000000Z stdout F world\n";
    }
    ~SampleLog() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };

  store::Store& store_;
};

struct World {
  FakeClock clock;
  store::Store store{clock};
  OneFileLogs logs{store};
  apiserver::Router router;
  // `with_logs` false: a server without a log source (pod logs get 400).
  World(const std::string& token, bool with_logs)
      : router(store, with_logs ? &logs : nullptr,
               apiserver::RouterOptions{token, "v1.30.0", &clock, {}}) {
    Json container = {{"name", "pytorch"}, {"image", "pytorch-mnist:1"}};
    Json replica = {{"replicas", 1},
                    {"restartPolicy", "OnFailure"},
                    {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
    FUZZ_CHECK(store
                   .Create(api::PyTorchJobs(), "default",
                           {{"apiVersion", "kubeflow.org/v1"},
                            {"kind", "PyTorchJob"},
                            {"metadata", {{"name", "job"}, {"namespace", "default"}}},
                            {"spec", {{"pytorchReplicaSpecs", {{"Master", replica}}}}}})
                   .ok());
    FUZZ_CHECK(store
                   .Create(api::Pods(), "default",
                           {{"apiVersion", "v1"},
                            {"kind", "Pod"},
                            {"metadata", {{"name", "job-master-0"}, {"namespace", "default"}}},
                            {"spec", {{"containers", Json::array({container})}}}})
                   .ok());
  }
};

apiserver::HttpRequest ParseRequest(std::string_view text) {
  apiserver::HttpRequest request;
  std::size_t eol = text.find('\n');
  std::string_view line = text.substr(0, eol);
  std::size_t space = line.find(' ');
  request.method = std::string(line.substr(0, space));
  if (space != std::string_view::npos) request.target = std::string(line.substr(space + 1));
  if (eol == std::string_view::npos) return request;
  text.remove_prefix(eol + 1);
  while (!text.empty()) {
    eol = text.find('\n');
    line = text.substr(0, eol);
    if (line.empty()) {
      request.body = std::string(text.substr(1));
      break;
    }
    std::size_t colon = line.find(':');
    std::string name(line.substr(0, colon));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value;
    if (colon != std::string_view::npos) {
      value = std::string(line.substr(colon + 1));
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    }
    request.headers.emplace(std::move(name), std::move(value));
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return request;
}

void CheckResponse(apiserver::HttpResponse& response) {
  FUZZ_CHECK(response.status >= 100 && response.status <= 599);
  if (response.stream) {
    std::string out;
    for (int i = 0; i < 4 && response.stream->Poll(&out); ++i) {
    }
    response.stream->Stop();
    return;
  }
  if (response.status >= 400 && response.content_type == "application/json") {
    Json body = Json::parse(response.body, nullptr, false);
    FUZZ_CHECK(!body.is_discarded());
    FUZZ_CHECK(body.value("kind", "") == "Status");
    FUZZ_CHECK(body.value("code", 0) == response.status);
  }
}

}  // namespace

int FuzzRouter(const std::uint8_t* data, std::size_t size) {
  apiserver::HttpRequest request = ParseRequest(AsText(data, size));
  World open("", /*with_logs=*/false);
  auto response = open.router.Route(request);
  CheckResponse(response);

  World guarded(kToken, /*with_logs=*/true);
  auto guarded_response = guarded.router.Route(request);
  CheckResponse(guarded_response);
  apiserver::Query query;
  auto path = apiserver::ParseTarget(request.target, &query);
  bool health =
      path.ok() && (path->path == "/healthz" || path->path == "/livez" || path->path == "/readyz");
  if (request.Header("authorization") != std::string("Bearer ") + kToken && !health) {
    FUZZ_CHECK(guarded_response.status == 401);
  }
  return 0;
}

}  // namespace pjemu::fuzz
