// `pjemu serve` and the kubectl-like commands against it, driven as subprocesses: create, get
// (table, -o name, -o yaml, -l), wait for Succeeded, logs, describe, delete -f; then SIGTERM
// stops the server with exit 0 and no pod process left.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("serve answers create, get, wait, logs, describe and delete from the pjemu CLI",
          "[cli][serve]") {
  std::string dir = TempDir("serve");
  std::string kubeconfig = dir + "/kubeconfig";
  std::string marker = "serve-test-" + std::to_string(::getpid());
  std::string job = WriteFile(dir, "job.yaml",
                              "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
                              "metadata:\n  name: served\n  namespace: kubeflow\n"
                              "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n"
                              "      restartPolicy: Never\n      template:\n        spec:\n"
                              "          containers:\n            - name: pytorch\n"
                              "              image: busybox\n"
                              "              command: [sh, -c, \"echo served-log-line\"]\n"
                              "              env: [{name: PJEMU_TEST_MARKER, value: " +
                                  marker + "}]\n");
  CliProcess serve({"serve", "--port", "0", "--kubeconfig", kubeconfig});
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!std::filesystem::exists(kubeconfig) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(std::filesystem::exists(kubeconfig));
  std::this_thread::sleep_for(100ms);  // the file is written in one go; let it close
  auto pjemu = [&](std::vector<std::string> args) {
    args.push_back("--kubeconfig");
    args.push_back(kubeconfig);
    return RunPjemu(args, 60s);
  };

  CliResult created = pjemu({"create", "-f", job});
  INFO(created.out << created.err << serve.Out() << serve.Err());
  REQUIRE(created.exit_code == 0);
  CHECK(Contains(created.out, "pytorchjob.kubeflow.org/served created"));

  CliResult again = pjemu({"create", "-f", job});
  CHECK(again.exit_code == 1);
  CHECK(Contains(again.err, "Error from server (AlreadyExists): error when creating"));

  // Client-side apply: the first records last-applied-configuration, the second finds no change.
  CliResult applied = pjemu({"apply", "-f", job});
  CHECK(applied.exit_code == 0);
  CHECK(Contains(applied.out, "pytorchjob.kubeflow.org/served configured"));
  CliResult reapplied = pjemu({"apply", "-f", job});
  CHECK(reapplied.exit_code == 0);
  CHECK(Contains(reapplied.out, "pytorchjob.kubeflow.org/served unchanged"));

  CliResult waited =
      pjemu({"wait", "--for=condition=Succeeded", "pytorchjob/served", "-n", "kubeflow",
             "--timeout=45s"});
  INFO(waited.err);
  REQUIRE(waited.exit_code == 0);
  CHECK(Contains(waited.out, "pytorchjob.kubeflow.org/served condition met"));

  CliResult table = pjemu({"get", "pytorchjobs", "-n", "kubeflow"});
  CHECK(table.exit_code == 0);
  CHECK(Contains(table.out, "NAME"));
  CHECK(Contains(table.out, "STATE"));
  CHECK(Contains(table.out, "Succeeded"));

  CliResult names = pjemu({"get", "pods", "-l", "training.kubeflow.org/job-name=served", "-n",
                           "kubeflow", "-o", "name"});
  CHECK(names.exit_code == 0);
  CHECK(names.out == "pod/served-master-0\n");

  CliResult yaml = pjemu({"get", "-o", "yaml", "pytorchjobs", "served", "-n", "kubeflow"});
  CHECK(yaml.exit_code == 0);
  CHECK(Contains(yaml.out, "kind: PyTorchJob"));
  CHECK(Contains(yaml.out, "type: Succeeded"));

  CliResult logs = pjemu({"logs", "served-master-0", "-n", "kubeflow"});
  CHECK(logs.exit_code == 0);
  CHECK(logs.out == "served-log-line\n");

  CliResult described = pjemu({"describe", "pytorchjob", "served", "-n", "kubeflow"});
  CHECK(described.exit_code == 0);
  CHECK(Contains(described.out, "Pytorch Replica Specs:"));
  CHECK(Contains(described.out, "Events:"));

  CliResult missing = pjemu({"get", "pytorchjob", "nosuch", "-n", "kubeflow"});
  CHECK(missing.exit_code == 1);
  CHECK(Contains(missing.err,
                 "Error from server (NotFound): pytorchjobs.kubeflow.org \"nosuch\" not found"));

  CliResult deleted = pjemu({"delete", "-f", job});
  CHECK(deleted.exit_code == 0);
  CHECK(Contains(deleted.out, "pytorchjob.kubeflow.org \"served\" deleted"));
  // The job's pods go with it (garbage collection; graceful deletion of finished pods).
  CliResult empty;
  for (int i = 0; i < 50; ++i) {
    empty = pjemu({"get", "pods", "-n", "kubeflow"});
    if (Contains(empty.err, "No resources found")) break;
    std::this_thread::sleep_for(200ms);
  }
  CHECK(Contains(empty.err, "No resources found in kubeflow namespace."));

  serve.Signal(SIGTERM);
  CHECK(serve.Wait(30s) == 0);
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("the kubectl-like commands say how to reach a server when none runs", "[cli]") {
  CliResult r = RunPjemu({"get", "pods", "--server", "http://127.0.0.1:1"}, 30s);
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.err, "is `pjemu serve` running?"));
}

}  // namespace
}  // namespace pjemu::testing
