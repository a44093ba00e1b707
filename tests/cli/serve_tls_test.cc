// `pjemu serve --token` (https, the CA in the kubeconfig) reached by pjemu's own client over
// TLS: get verified against the kubeconfig's certificate-authority-data, refused without the CA
// or with a wrong token; `get -w` streaming rows over TLS; `wait` and `delete --wait` through
// watches. And serve's default: https without a token, the CA kept in --data-dir across restarts,
// plain http only with --insecure-http.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string ServerOf(const std::string& kubeconfig) {
  std::ifstream in(kubeconfig);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (std::regex_search(s, m, std::regex(R"(server: "?(https?://[^"\s]+))"))) return m[1];
  return "";
}

bool WaitFor(const std::function<bool()>& done, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

TEST_CASE("the pjemu client speaks https to serve --token and watches over it", "[cli][serve]") {
  std::string dir = TempDir("serve-tls");
  std::string kubeconfig = dir + "/kubeconfig";
  std::string marker = "serve-tls-test-" + std::to_string(::getpid());
  std::string job = WriteFile(dir, "job.yaml",
                              "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
                              "metadata:\n  name: secure\n  namespace: kubeflow\n"
                              "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n"
                              "      restartPolicy: Never\n      template:\n        spec:\n"
                              "          containers:\n            - name: pytorch\n"
                              "              image: busybox\n"
                              "              command: [sh, -c, \"sleep 1; echo secure-line\"]\n"
                              "              env: [{name: PJEMU_TEST_MARKER, value: " +
                                  marker + "}]\n");
  CliProcess serve({"serve", "--port", "0", "--token", "s3cret", "--kubeconfig", kubeconfig});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(kubeconfig); }, 30s));
  std::this_thread::sleep_for(100ms);
  std::string server = ServerOf(kubeconfig);
  INFO("server " << server << "\n" << serve.Out() << serve.Err());
  REQUIRE(server.rfind("https://", 0) == 0);
  auto pjemu = [&](std::vector<std::string> args) {
    args.push_back("--kubeconfig");
    args.push_back(kubeconfig);
    return RunPjemu(args, 60s);
  };

  // Verified TLS with the kubeconfig's CA and token.
  CliResult empty = pjemu({"get", "pytorchjobs", "-n", "kubeflow"});
  INFO(empty.out << empty.err);
  CHECK(empty.exit_code == 0);
  CHECK(Contains(empty.err, "No resources found in kubeflow namespace."));

  // Without the CA the self-signed certificate is refused; --insecure-skip-tls-verify takes it.
  CliResult untrusted = RunPjemu({"get", "pods", "--server", server, "--token", "s3cret"}, 30s);
  CHECK(untrusted.exit_code == 1);
  CHECK(Contains(untrusted.err, "TLS handshake"));
  CHECK(Contains(untrusted.err, "certificate verify failed"));
  CliResult insecure = RunPjemu(
      {"get", "pods", "--server", server, "--token", "s3cret", "--insecure-skip-tls-verify"}, 30s);
  CHECK(insecure.exit_code == 0);
  // A wrong token is the server's 401.
  CliResult wrong = pjemu({"get", "pods", "--token", "wrong"});
  CHECK(wrong.exit_code == 1);
  CHECK(Contains(wrong.err, "Error from server (Unauthorized)"));

  // get -w: the header and rows as the job's state changes, streamed over TLS.
  CliProcess watching({"get", "pytorchjobs", "-n", "kubeflow", "-w", "--kubeconfig", kubeconfig});
  std::this_thread::sleep_for(300ms);
  CliResult created = pjemu({"create", "-f", job});
  REQUIRE(created.exit_code == 0);

  CliResult waited = pjemu(
      {"wait", "--for=condition=Succeeded", "pytorchjob/secure", "-n", "kubeflow", "--timeout=45s"});
  INFO(waited.err);
  REQUIRE(waited.exit_code == 0);
  CHECK(waited.out == "pytorchjob.kubeflow.org/secure condition met\n");
  CHECK(WaitFor([&] { return Contains(watching.Out(), "Succeeded"); }, 10s));
  watching.Signal(SIGTERM);
  watching.Wait(10s);
  std::string rows = watching.Out();
  INFO(rows << watching.Err());
  CHECK(rows.rfind("NAME", 0) == 0);  // one header, then a row per change
  CHECK(std::count(rows.begin(), rows.end(), '\n') >= 3);
  CHECK(rows.find("NAME", 1) == std::string::npos);
  CHECK(Contains(rows, "secure"));
  CHECK(Contains(rows, "Running"));

  // wait for a condition that does not come: the timeout, exit 1 as kubectl's.
  CliResult timed_out = pjemu(
      {"wait", "--for=condition=Failed", "pytorchjob/secure", "-n", "kubeflow", "--timeout=1s"});
  CHECK(timed_out.exit_code == 1);
  CHECK(Contains(timed_out.err, "timed out waiting for the condition on pytorchjobs/secure"));
  CliResult missing = pjemu(
      {"wait", "--for=condition=Succeeded", "pytorchjob/nosuch", "-n", "kubeflow", "--timeout=5s"});
  CHECK(missing.exit_code == 1);
  CHECK(Contains(missing.err, "(NotFound)"));

  // delete waits (through a watch) until the job is gone; wait --for=delete then returns at once.
  CliResult deleted = pjemu({"delete", "-f", job, "--timeout=30s"});
  CHECK(deleted.exit_code == 0);
  CHECK(Contains(deleted.out, "pytorchjob.kubeflow.org \"secure\" deleted"));
  CliResult gone = pjemu({"get", "pytorchjob", "secure", "-n", "kubeflow"});
  CHECK(gone.exit_code == 1);
  CliResult for_delete =
      pjemu({"wait", "--for=delete", "pytorchjob/secure", "-n", "kubeflow", "--timeout=5s"});
  CHECK(for_delete.exit_code == 0);

  serve.Signal(SIGTERM);
  CHECK(serve.Wait(30s) == 0);
  CHECK(ProcessesWithEnv("PJEMU_TEST_MARKER=" + marker).empty());
}

std::string CaOf(const std::string& kubeconfig) {
  std::ifstream in(kubeconfig);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (std::regex_search(s, m, std::regex(R"(certificate-authority-data: (\S+))"))) return m[1];
  return "";
}

// Starts serve with `args`, waits for its kubeconfig, runs `check`, stops it with SIGTERM.
void WithServe(const std::vector<std::string>& args, const std::string& kubeconfig,
               const std::function<void(CliProcess&)>& check) {
  std::filesystem::remove(kubeconfig);
  CliProcess serve(args);
  REQUIRE(WaitFor([&] { return Contains(serve.Out(), "serving the Kubernetes API"); }, 30s));
  INFO(serve.Out() << serve.Err());
  check(serve);
  serve.Signal(SIGTERM);
  CHECK(serve.Wait(30s) == 0);
}

TEST_CASE("serve speaks https by default, keeps its CA in --data-dir, http only when asked",
          "[cli][serve]") {
  std::string dir = TempDir("serve-https-default");
  std::string kubeconfig = dir + "/kubeconfig";
  std::vector<std::string> args = {"serve",    "--port",     "0",          "--kubeconfig",
                                   kubeconfig, "--data-dir", dir + "/data"};
  std::string first_ca;
  WithServe(args, kubeconfig, [&](CliProcess& serve) {
    CHECK(Contains(serve.Out(), "serving the Kubernetes API on https://127.0.0.1:"));
    CHECK(Contains(serve.Out(), "CA: " + dir + "/data/pki/ca.crt"));
    first_ca = CaOf(kubeconfig);
    CHECK_FALSE(first_ca.empty());
    CliResult got = RunPjemu({"get", "pods", "-A", "--kubeconfig", kubeconfig}, 30s);
    INFO(got.out << got.err);
    CHECK(got.exit_code == 0);  // verified against the kubeconfig's CA, no token
  });
  CHECK(std::filesystem::exists(dir + "/data/pki/ca.key"));
  CHECK((std::filesystem::status(dir + "/data/pki/ca.key").permissions() &
         std::filesystem::perms::group_all) == std::filesystem::perms::none);
  // A restart on the same data dir: the same CA, so kubeconfigs written before stay valid.
  WithServe(args, kubeconfig, [&](CliProcess&) { CHECK(CaOf(kubeconfig) == first_ca); });
  // Without --data-dir every start makes a fresh CA.
  std::vector<std::string> fresh = {"serve", "--port", "0", "--kubeconfig", kubeconfig};
  WithServe(fresh, kubeconfig, [&](CliProcess&) { CHECK(CaOf(kubeconfig) != first_ca); });
  // --insecure-http: plain http, no CA in the kubeconfig.
  fresh.push_back("--insecure-http");
  WithServe(fresh, kubeconfig, [&](CliProcess& serve) {
    CHECK(Contains(serve.Out(), "serving the Kubernetes API on http://127.0.0.1:"));
    CHECK(CaOf(kubeconfig).empty());
    CHECK(ServerOf(kubeconfig).rfind("http://", 0) == 0);
    CliResult got = RunPjemu({"get", "pods", "-A", "--kubeconfig", kubeconfig}, 30s);
    CHECK(got.exit_code == 0);
  });
  CliResult both = RunPjemu({"serve", "--port", "0", "--insecure-http", "--token", "t"}, 30s);
  CHECK(both.exit_code == 2);
  CHECK(Contains(both.err, "token: a bearer token needs https"));
}

}  // namespace
}  // namespace pjemu::testing
