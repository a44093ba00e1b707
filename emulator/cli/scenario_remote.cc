#include "emulator/cli/scenario_remote.h"

#include <chrono>
#include <random>

#include "emulator/cli/pod_log_followers.h"
#include "emulator/cli/signals.h"
#include "emulator/scenario/remote.h"

namespace pjemu::cli {

Result<RemoteCluster> OpenRemoteCluster(const RemoteFlags& flags) {
  RemoteFlags connect = flags;
  connect.ns.clear();  // -n is the namespaces' prefix here, not a namespace
  ASSIGN_OR_RETURN(Remote remote, Connect(connect));
  RemoteCluster cluster;
  cluster.client = std::move(remote.client);
  if (!flags.ns.empty()) cluster.prefix = flags.ns;
  const std::string server = cluster.client->options().server;
  ASSIGN_OR_RETURN(client::HttpReply reply, cluster.client->Request("GET", "/apis/kubeflow.org/v1"));
  if (reply.status == 401) {
    return Status(Code::kUnauthorized,
                  "the server " + server + " refused the kubeconfig's credentials (401 Unauthorized)");
  }
  if (reply.status == 404) {
    return Status(Code::kNotFound, "the server " + server +
                                       " does not serve kubeflow.org/v1: is the Kubeflow Training "
                                       "Operator (v1.9.x) installed?");
  }
  if (reply.status / 100 != 2) {
    return Status(Code::kUnavailable, "the server " + server + " answered " +
                                          std::to_string(reply.status) +
                                          " to GET /apis/kubeflow.org/v1: " + reply.body.substr(0, 200));
  }
  return cluster;
}

scenario::ScenarioResult RunRemoteFile(RemoteCluster& cluster, const std::string& path) {
  scenario::ScenarioResult result;
  result.path = path;
  result.name = path;
  auto start = std::chrono::steady_clock::now();
  auto sc = scenario::LoadScenario(path);
  if (!sc.ok()) {
    result.setup = sc.status();
    return result;
  }
  if (!sc->name.empty()) result.name = sc->name;
  scenario::RemoteSupport support = scenario::ClassifyRemote(*sc);
  if (!support.capable) {
    result.skipped = support.reason;
    return result;
  }
  std::random_device random;
  const std::string ns = scenario::RemoteNamespace(
      cluster.prefix, path, (std::uint64_t{random()} << 32) | random());
  // One set of followers per file: they end with its run (its namespace is gone by then).
  PodLogFollowers logs(cluster.client->options());
  scenario::RemoteSeams seams;
  seams.client = cluster.client.get();
  seams.read_log = [&logs](const std::string& n, const std::string& pod, const std::string& c) {
    return logs.Read(n, pod, c);
  };
  seams.interrupted = [] { return StopSignal() != 0; };
  auto report = scenario::RunRemoteScenario(*sc, seams, ns);
  if (report.ok()) {
    result.report = std::move(*report);
  } else {
    result.setup = report.status();
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace pjemu::cli
