// pjemu-apiserver-testd: a test-only server for the client tests (kubectl, Python, load).
// Runs ApiServer over a Store with the default namespaces, prints "PORT <n>", optionally writes
// a kubeconfig, and serves until SIGTERM or SIGINT. With --log-file, every existing pod's
// container log is that CRI file, "running" until the pod's status.phase is Succeeded or
// Failed (so a test ends `logs -f` by patching the pod's status).
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>

#include "emulator/apiserver/apiserver.h"

namespace {

using namespace pjemu;

class FixtureLogs : public api::PodLogs {
 public:
  FixtureLogs(store::Store& store, std::string path) : store_(store), path_(std::move(path)) {}
  Result<api::LogFile> Find(const api::LogRequest& request) override {
    ASSIGN_OR_RETURN(Json pod, store_.Get(api::Pods(), request.ns, request.pod));
    std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
    return api::LogFile{path_, phase != "Succeeded" && phase != "Failed"};
  }

 private:
  store::Store& store_;
  std::string path_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pjemu-apiserver-testd: an API server over an empty store, for client tests"};
  apiserver::ApiServerOptions options;
  std::string kubeconfig, log_file;
  app.add_option("--port", options.port, "port to listen on (0 = ephemeral)");
  app.add_option("--address", options.address, "address to listen on");
  app.add_option("--token", options.token, "require this bearer token (turns TLS on)");
  app.add_flag("--tls", options.tls, "serve https with a self-signed certificate");
  app.add_option("--git-version", options.git_version, "the /version gitVersion");
  app.add_option("--threads", options.threads, "io threads");
  app.add_option("--kubeconfig", kubeconfig, "write a kubeconfig for the server here");
  app.add_option("--log-file", log_file, "serve this CRI log file as every pod's log");
  int idle_ms = 0, header_ms = 0, body_ms = 0;  // 0 = ApiServerLimits' default
  app.add_option("--idle-timeout-ms", idle_ms, "ApiServerLimits::idle_timeout");
  app.add_option("--header-timeout-ms", header_ms, "ApiServerLimits::header_timeout");
  app.add_option("--body-timeout-ms", body_ms, "ApiServerLimits::body_timeout");
  CLI11_PARSE(app, argc, argv);
  if (idle_ms > 0) options.limits.idle_timeout = std::chrono::milliseconds(idle_ms);
  if (header_ms > 0) options.limits.header_timeout = std::chrono::milliseconds(header_ms);
  if (body_ms > 0) options.limits.body_timeout = std::chrono::milliseconds(body_ms);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the io threads inherit the mask

  RealClock clock;
  store::Store store(clock);
  std::unique_ptr<FixtureLogs> logs;
  if (!log_file.empty()) logs = std::make_unique<FixtureLogs>(store, log_file);
  apiserver::ApiServer server(store, logs.get(), options);
  if (Status status = server.Start(); !status.ok()) {
    std::cerr << "pjemu-apiserver-testd: " << status.ToString() << "\n";
    return 1;
  }
  if (!kubeconfig.empty()) {
    std::ofstream out(kubeconfig);
    out << server.Kubeconfig();
    if (!out) {
      std::cerr << "pjemu-apiserver-testd: cannot write " << kubeconfig << "\n";
      return 1;
    }
  }
  std::cout << "PORT " << server.port() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  server.Stop();
  return 0;
}
