// The remote half of `pjemu scenario run --kubeconfig K [--context C] [-n PREFIX]`
// (scenario_command.cc): reaching the cluster the kubeconfig names and checking, before any
// scenario, that it answers, accepts the credentials and serves kubeflow.org/v1; then playing
// each capable scenario with emulator/scenario's remote runner in a fresh namespace, and
// skipping the others with their reason.
// Thread safety: main thread only.
#pragma once

#include <memory>
#include <string>

#include "emulator/cli/remote.h"
#include "emulator/scenario/report.h"

namespace pjemu::cli {

struct RemoteCluster {
  std::unique_ptr<client::HttpClient> client;
  std::string prefix = "pjemu";  // of each scenario's namespace (-n)
};

// Connects (kubeconfig, context, CA, token, client certificate) and asks for the kubeflow.org/v1
// discovery document. One line saying what is wrong (kInvalid: no such file, unknown context;
// kUnavailable: refused, TLS handshake; kUnauthorized: 401; kNotFound: no Training Operator).
Result<RemoteCluster> OpenRemoteCluster(const RemoteFlags& flags);

// Loads and runs one file on the cluster, following its pods' logs while it runs and stopping
// early on Ctrl-C (StopSignal, signals.h; the caller installs the handlers):
// ScenarioResult::skipped set with the reason when the scenario cannot run there, setup not ok
// when it could not be loaded or set up.
scenario::ScenarioResult RunRemoteFile(RemoteCluster& cluster, const std::string& path);

}  // namespace pjemu::cli
