// Shared setup of the apiserver tests: a Store on a FakeClock, a fake PodLogs serving CRI files
// written by the test, and a Router, with helpers to send requests and build objects.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "emulator/api/logs.h"
#include "emulator/apiserver/router.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver::testing {

// PodLogs over files the test writes: "<ns>/<pod>" -> file; `running` per pod.
class FakeLogs : public api::PodLogs {
 public:
  explicit FakeLogs(store::Store& store) : store_(store) {}
  Result<api::LogFile> Find(const api::LogRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto pod = store_.Get(api::Pods(), request.ns, request.pod);
    if (!pod.ok()) return pod.status();
    auto it = files_.find(request.ns + "/" + request.pod);
    if (it == files_.end()) {
      return BadRequestError("container \"pytorch\" in pod \"" + request.pod +
                             "\" is waiting to start: ContainerCreating");
    }
    return it->second;
  }
  void Set(const std::string& ns, const std::string& pod, const std::string& path, bool running) {
    std::lock_guard<std::mutex> lock(mu_);
    files_[ns + "/" + pod] = api::LogFile{path, running};
  }

 private:
  store::Store& store_;
  std::mutex mu_;
  std::map<std::string, api::LogFile> files_;
};

inline Json JobJson(const std::string& name, const std::string& ns = "default") {
  Json container = {
      {"name", "pytorch"}, {"image", "pytorch-mnist:1"}, {"command", {"python3", "mnist.py"}}};
  Json replica = {{"replicas", 1},
                  {"restartPolicy", "OnFailure"},
                  {"template", {{"spec", {{"containers", {container}}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", "mnist"}}}}},
          {"spec", {{"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", replica}}}}}};
}

inline Json PodJson(const std::string& name, const std::string& ns = "default") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"training.kubeflow.org/job-name", "mnist"}}}}},
          {"spec", {{"containers", {{{"name", "pytorch"}, {"image", "pytorch-mnist:1"}}}}}}};
}

class RouterFixture {
 public:
  RouterFixture()
      : store(clock), logs(store), router(store, &logs, RouterOptions{"", "v1.30.0", &clock, {}}) {
    dir = std::filesystem::temp_directory_path() /
          ("pjemu-apiserver-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~RouterFixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  HttpResponse Do(const std::string& method, const std::string& target,
                  const std::string& body = "", std::map<std::string, std::string> headers = {}) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    request.body = body;
    request.headers = std::move(headers);
    if (!request.headers.count("content-type") && !body.empty()) {
      request.headers["content-type"] = "application/json";
    }
    return router.Route(request);
  }
  static Json Body(const HttpResponse& r) { return Json::parse(r.body); }

  // Drains what a stream has ready now into lines of JSON.
  static std::vector<Json> Lines(StreamSource& stream, bool* ended = nullptr) {
    std::string out;
    bool more = stream.Poll(&out);
    if (ended) *ended = !more;
    std::vector<Json> lines;
    std::size_t start = 0;
    while (start < out.size()) {
      std::size_t nl = out.find('\n', start);
      lines.push_back(Json::parse(out.substr(start, nl - start)));
      start = nl + 1;
    }
    return lines;
  }

  std::string WriteLog(const std::string& name, const std::string& content) {
    std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary | std::ios::app) << content;
    return path;
  }

  FakeClock clock;
  store::Store store;
  FakeLogs logs;
  Router router;
  std::filesystem::path dir;
  static inline int counter = 0;
};

inline const std::string kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json";

// The messages a channel handler sends, in order, and whether it closed.
class RecordingSink : public ChannelSink {
 public:
  void Send(std::string message, bool binary) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages.emplace_back(std::move(message), binary);
  }
  void Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    closed = true;
    cv_.notify_all();
  }
  bool WaitClosed() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(5), [this] { return closed; });
  }
  std::vector<std::pair<std::string, bool>> messages;
  bool closed = false;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace pjemu::apiserver::testing
