// The pjemu CLI driven as a subprocess, as a user runs it: exit codes (0 ok, 1 failed,
// 2 invalid input, 3 timeout, 130 interrupted), validation messages with file:line, the live
// output of `run`, and that nothing a run started is left running, also after Ctrl-C.
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;

// A master-only PyTorchJob running `script` with busybox's sh, tagged with an env marker.
std::string ShellJob(const std::string& name, const std::string& script,
                     const std::string& marker, const std::string& restart = "Never") {
  return "apiVersion: kubeflow.org/v1\n"
         "kind: PyTorchJob\n"
         "metadata:\n"
         "  name: " + name + "\n"
         "spec:\n"
         "  pytorchReplicaSpecs:\n"
         "    Master:\n"
         "      replicas: 1\n"
         "      restartPolicy: " + restart + "\n"
         "      template:\n"
         "        spec:\n"
         "          containers:\n"
         "            - name: pytorch\n"
         "              image: busybox\n"
         "              command: [sh, -c, \"" + script + "\"]\n"
         "              env:\n"
         "                - {name: PJEMU_TEST_MARKER, value: \"" + marker + "\"}\n";
}

std::string Marker(const std::string& test) {
  return test + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("version prints the pjemu version and the emulated operator", "[cli]") {
  CliResult r = RunPjemu({"version"});
  CHECK(r.exit_code == 0);
  CHECK(Contains(r.out, "pjemu version "));
  CHECK(Contains(r.out, "v1.9.4"));
}

TEST_CASE("help lists the commands with examples, a bad flag is exit 2", "[cli]") {
  CliResult help = RunPjemu({"--help"});
  CHECK(help.exit_code == 0);
  for (const char* word : {"run", "serve", "validate", "get", "logs", "wait", "Examples:"}) {
    CHECK(Contains(help.out, word));
  }
  CliResult bad = RunPjemu({"version", "--no-such-flag"});
  CHECK(bad.exit_code == 2);
  CHECK(Contains(bad.err, "--no-such-flag"));
}

TEST_CASE("validate prints the defaulted seed job", "[cli]") {
  CliResult r = RunPjemu({"validate", "-f", "fixtures/seeds/pytorch-simple.yaml"});
  REQUIRE(r.exit_code == 0);
  CHECK(Contains(r.out, "name: pytorch-simple"));
  // Defaults the operator adds in memory: cleanPodPolicy and the pytorchjob-port.
  CHECK(Contains(r.out, "cleanPodPolicy: None"));
  CHECK(Contains(r.out, "pytorchjob-port"));
}

TEST_CASE("validate reports broken YAML with file and line, exit 2", "[cli]") {
  std::string dir = TempDir("validate-yaml");
  std::string path = WriteFile(dir, "broken.yaml",
                               "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n"
                               "  name: x\nspec: [unclosed\n");
  CliResult r = RunPjemu({"validate", "-f", path});
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err, path + ":"));
  CHECK(r.out.empty());
}

TEST_CASE("validate reports a webhook error at the offending field's line", "[cli]") {
  std::string dir = TempDir("validate-job");
  std::string yaml = ShellJob("two-masters", "true", "unused");
  yaml.replace(yaml.find("replicas: 1"), 11, "replicas: 2");
  std::string path = WriteFile(dir, "job.yaml", yaml);
  CliResult r = RunPjemu({"validate", "-f", path});
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err, path + ":8:"));  // the line of `replicas: 2`
  CHECK(Contains(r.err, "Master"));
}

TEST_CASE("run with an invalid job exits 2 and starts nothing", "[cli]") {
  std::string dir = TempDir("run-invalid");
  std::string marker = Marker("run-invalid");
  std::string yaml = ShellJob("bad", "sleep 30", marker);
  yaml.replace(yaml.find("replicas: 1"), 11, "replicas: 2");
  CliResult r = RunPjemu({"run", "-f", WriteFile(dir, "job.yaml", yaml)}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err, "job.yaml:8:"));
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("run of the nccl seed with its placeholder image fails fast saying how to map it",
          "[cli]") {
  CliResult r = RunPjemu({"run", "-f", "fixtures/seeds/pytorch_job_mnist_nccl.yaml"}, 60s);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err, "<training image>"));
  CHECK(Contains(r.err, "image-map"));
}

TEST_CASE("run of a tiny busybox job succeeds, streams its log and prints the summary", "[cli]") {
  std::string dir = TempDir("run-ok");
  std::string marker = Marker("run-ok");
  std::string path = WriteFile(dir, "job.yaml", ShellJob("hello", "echo hi from pjemu", marker));
  CliResult r = RunPjemu({"run", "-f", path, "--timeout", "60s"}, 90s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(Contains(r.out, "[hello-master-0] hi from pjemu"));
  CHECK(Contains(r.out, "Succeeded"));
  CHECK(Contains(r.out, "JOB"));
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("run --output json gives one JSON summary", "[cli]") {
  std::string dir = TempDir("run-json");
  std::string path =
      WriteFile(dir, "job.yaml", ShellJob("json-job", "echo quiet", Marker("run-json")));
  CliResult r = RunPjemu({"run", "-f", path, "--output", "json", "--timeout", "60s"}, 90s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["jobs"].size() == 1);
  CHECK(j["jobs"][0]["name"] == "json-job");
  CHECK(j["jobs"][0]["condition"] == "Succeeded");
  CHECK(j["exitCode"] == 0);
}

TEST_CASE("run of a job whose master fails exits 1", "[cli]") {
  std::string dir = TempDir("run-fail");
  std::string path = WriteFile(dir, "job.yaml", ShellJob("failing", "exit 3", Marker("run-fail")));
  CliResult r = RunPjemu({"run", "-f", path, "--timeout", "60s"}, 90s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.out, "Failed"));
}

TEST_CASE("run past --timeout exits 3 and leaves no process", "[cli]") {
  std::string dir = TempDir("run-timeout");
  std::string marker = Marker("run-timeout");
  std::string path = WriteFile(dir, "job.yaml", ShellJob("sleepy", "sleep 300", marker));
  CliResult r = RunPjemu({"run", "-f", path, "--timeout", "3s"}, 60s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(Contains(r.err, "timed out"));
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("Ctrl-C during a run stops the cluster and leaves no process", "[cli]") {
  std::string dir = TempDir("run-sigint");
  std::string marker = Marker("run-sigint");
  std::string path = WriteFile(dir, "job.yaml", ShellJob("interrupted", "sleep 300", marker));
  CliProcess p({"run", "-f", path});
  // Wait until the job's process runs, so the signal lands mid-run.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE_FALSE(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
  p.Signal(SIGINT);
  int code = p.Wait(30s);
  INFO(p.Out() << p.Err());
  CHECK(code == 130);
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("run keeps two jobs of one name in two namespaces apart, without colour when piped",
          "[cli]") {
  std::string dir = TempDir("run-two-ns");
  std::string marker = Marker("run-two-ns");
  std::string job = ShellJob("twin", "echo twin", marker);
  std::string with_ns = job;
  with_ns.replace(with_ns.find("  name: twin\n"), 13, "  name: twin\n  namespace: team-a\n");
  std::string other = job;
  other.replace(other.find("  name: twin\n"), 13, "  name: twin\n  namespace: team-b\n");
  std::string namespaces =
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\n"
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n---\n";
  std::string path = WriteFile(dir, "jobs.yaml", namespaces + with_ns + "---\n" + other);
  CliResult r = RunPjemu({"run", "-f", path, "--timeout", "60s"}, 90s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(Contains(r.out, "pytorchjob team-a/twin conditions:"));
  CHECK(Contains(r.out, "pytorchjob team-b/twin conditions:"));
  CHECK(Contains(r.out, "team-a/twin"));
  CHECK_FALSE(Contains(r.out, "\x1b["));  // stdout is a pipe: plain lines
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("run of a file that is not YAML exits 2 and starts nothing", "[cli]") {
  std::string dir = TempDir("run-bad-yaml");
  std::string path = WriteFile(dir, "job.yaml", "apiVersion: kubeflow.org/v1\nkind: [unclosed\n");
  CliResult r = RunPjemu({"run", "-f", path}, 30s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err, path + ":"));
}

// What a user's file carries next to the job: a ConfigMap, a Secret, a claim.
const char kConfigObjects[] =
    "---\n"
    "apiVersion: v1\n"
    "kind: ConfigMap\n"
    "metadata: {name: hparams}\n"
    "data: {LR: \"0.1\"}\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: Secret\n"
    "metadata: {name: tok}\n"
    "stringData: {token: abc}\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: PersistentVolumeClaim\n"
    "metadata: {name: data}\n"
    "spec:\n"
    "  accessModes: [ReadWriteOnce]\n"
    "  resources: {requests: {storage: 1Gi}}\n";

TEST_CASE("run creates the ConfigMaps, Secrets and claims a file carries next to its job",
          "[cli]") {
  std::string dir = TempDir("run-config");
  std::string marker = Marker("run-config");
  std::string path =
      WriteFile(dir, "job.yaml", ShellJob("cfg", "echo configured", marker) + kConfigObjects);
  CliResult r = RunPjemu({"run", "-f", path, "--timeout", "60s"}, 90s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(Contains(r.out, "[cfg-master-0] configured"));
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

TEST_CASE("run refuses a bad claim, a bad mount and an unknown kind at their lines", "[cli]") {
  std::string dir = TempDir("run-config-bad");
  std::string job = ShellJob("cfg", "true", Marker("run-config-bad"));
  std::string claim = std::string(kConfigObjects);
  claim.replace(claim.find("  resources: {requests: {storage: 1Gi}}\n"), 39, "");
  CliResult r = RunPjemu({"run", "-f", WriteFile(dir, "claim.yaml", job + claim)}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err,
                 "claim.yaml:32: PersistentVolumeClaim \"data\" is invalid: "
                 "spec.resources[storage]: Required value"));
  std::string mount = job + "              volumeMounts: [{name: cfg, mountPath: /cfg}]\n";
  r = RunPjemu({"run", "-f", WriteFile(dir, "mount.yaml", mount)}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err,
                 "mount.yaml:18: PyTorchJob.kubeflow.org \"cfg\" is invalid: "
                 "spec.pytorchReplicaSpecs.Master.template.spec.containers[0]."
                 "volumeMounts[0].name: Not found: \"cfg\""));
  std::string unknown = job + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n";
  r = RunPjemu({"run", "-f", WriteFile(dir, "unknown.yaml", unknown)}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(Contains(r.err,
                 "unknown.yaml:19: no matches for kind \"Deployment\" in version "
                 "\"apps/v1\""));
}

TEST_CASE("run says why a pod waits: the scheduler's message for a claim that is missing",
          "[cli]") {
  std::string dir = TempDir("run-pod-hold");
  std::string job = ShellJob("held", "true", Marker("run-pod-hold")) +
                    "              volumeMounts: [{name: d, mountPath: /data}]\n"
                    "          volumes: [{name: d, persistentVolumeClaim: {claimName: nosuch}}]\n";
  CliResult r = RunPjemu({"run", "-f", WriteFile(dir, "held.yaml", job), "--timeout", "2s"}, 30s);
  CHECK(r.exit_code == 3);
  CHECK(Contains(r.out + r.err,
                 "held-master-0                    Pending            restarts 0   0/1 nodes are "
                 "available: persistentvolumeclaim \"nosuch\" not found."));
}

}  // namespace
}  // namespace pjemu::testing
