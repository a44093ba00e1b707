// The streaming commands against a real `pjemu serve`: `logs -f` of a missing pod reports the
// server's NotFound as kubectl does (the streamed 404 Status with a Content-Length once failed in
// the client with "body limit exceeded"), and `wait` started before the condition holds returns
// when it comes true (delete of a ConfigMap, Succeeded of a PyTorchJob), through its watch.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A `pjemu serve --port 0` and a runner of CLI commands against it.
class Served {
 public:
  explicit Served(const std::string& name)
      : dir_(TempDir(name)),
        kubeconfig_(dir_ + "/kubeconfig"),
        serve_({"serve", "--port", "0", "--kubeconfig", kubeconfig_}) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!std::filesystem::exists(kubeconfig_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
    }
    std::this_thread::sleep_for(100ms);  // the file is written in one go; let it close
  }
  ~Served() {
    serve_.Signal(SIGTERM);
    serve_.Wait(30s);
  }
  bool Up() const { return std::filesystem::exists(kubeconfig_); }
  const std::string& dir() const { return dir_; }
  std::vector<std::string> Args(std::vector<std::string> args) const {
    args.push_back("--kubeconfig");
    args.push_back(kubeconfig_);
    return args;
  }
  CliResult Run(const std::vector<std::string>& args) const { return RunPjemu(Args(args), 60s); }

 private:
  std::string dir_, kubeconfig_;
  CliProcess serve_;
};

TEST_CASE("logs -f of a missing pod reports the server's NotFound", "[cli][serve]") {
  Served served("serve-logs-f");
  REQUIRE(served.Up());
  CliResult plain = served.Run({"logs", "nosuch"});
  CliResult followed = served.Run({"logs", "-f", "nosuch"});
  INFO(plain.err << followed.err);
  CHECK(plain.exit_code == 1);
  CHECK(followed.exit_code == 1);
  CHECK(Contains(followed.err, "Error from server (NotFound): pods \"nosuch\" not found"));
  CHECK_FALSE(Contains(followed.err, "body limit"));
  CHECK(followed.err == plain.err);
}

TEST_CASE("wait started before the condition holds returns once it does", "[cli][serve]") {
  Served served("serve-wait-later");
  REQUIRE(served.Up());
  std::string go = served.dir() + "/go";
  std::string marker = "serve-wait-later-" + std::to_string(::getpid());
  std::string cm = WriteFile(served.dir(), "cm.yaml",
                             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                             "data:\n  a: b\n");
  // The job succeeds only once the test creates `go`, after its wait has started.
  std::string job = WriteFile(served.dir(), "job.yaml",
                              "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
                              "metadata:\n  name: later\n"
                              "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n"
                              "      restartPolicy: Never\n      template:\n        spec:\n"
                              "          containers:\n            - name: pytorch\n"
                              "              image: busybox\n"
                              "              command: [sh, -c, \"while [ ! -e " +
                                  go +
                                  " ]; do sleep 0.05; done\"]\n"
                                  "              env: [{name: PJEMU_TEST_MARKER, value: " +
                                  marker + "}]\n" +
                                  // The test's folder, which the pod sees only as a volume.
                                  "              volumeMounts: [{name: dir, mountPath: " +
                                  served.dir() + "}]\n" +
                                  "          volumes: [{name: dir, hostPath: {path: " +
                                  served.dir() + "}}]\n");
  REQUIRE(served.Run({"create", "-f", cm}).exit_code == 0);
  REQUIRE(served.Run({"create", "-f", job}).exit_code == 0);

  CliProcess wait_delete(served.Args({"wait", "--for=delete", "configmap/x", "--timeout=20s"}));
  CliProcess wait_done(
      served.Args({"wait", "--for=condition=Succeeded", "pytorchjob/later", "--timeout=40s"}));
  std::this_thread::sleep_for(1s);  // both are listing/watching by now
  // Neither condition holds yet: neither wait has said so.
  CHECK(wait_delete.Out().empty());
  CHECK(wait_done.Out().empty());

  CliResult deleted = served.Run({"delete", "configmap", "x"});
  CHECK(deleted.exit_code == 0);
  INFO(wait_delete.Out() << wait_delete.Err());
  CHECK(wait_delete.Wait(10s) == 0);
  CHECK(Contains(wait_delete.Out(), "configmap/x condition met"));

  std::ofstream(go) << "go\n";
  INFO(wait_done.Out() << wait_done.Err());
  CHECK(wait_done.Wait(30s) == 0);
  CHECK(Contains(wait_done.Out(), "pytorchjob.kubeflow.org/later condition met"));
  served.Run({"delete", "pytorchjob", "later"});
}

}  // namespace
}  // namespace pjemu::testing
