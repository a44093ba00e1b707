// Remote: what the kubectl-like commands (create, apply, get, describe, logs, wait, delete) share
// to reach a running `pjemu serve`: the connection flags (--kubeconfig, --server, --token,
// -n/--namespace), the kubeconfig lookup ($KUBECONFIG, ~/.kube/config, then the file `serve`
// writes by default), resource-name resolution ("po", "pytorchjob/x", "pytorchjobs.kubeflow.org")
// and kubectl's ways of naming objects in output.
// Thread safety: plain values and functions; used from the main thread.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "emulator/api/resources.h"
#include "emulator/client/http_client.h"
#include "emulator/common/status.h"

namespace pjemu::cli {

// The kubeconfig `pjemu serve` writes when --kubeconfig is not given: ~/.pjemu/kubeconfig.
std::string DefaultServeKubeconfig();

struct RemoteFlags {
  std::string kubeconfig;
  std::string context;  // the kubeconfig context to use ("" = its current-context)
  std::string server;
  std::string token;
  std::string certificate_authority;  // a PEM file, as kubectl's --certificate-authority
  bool insecure_skip_tls_verify = false;
  std::string ns;
  bool all_namespaces = false;
};
// Adds --kubeconfig, --context, -s/--server, --token, --certificate-authority, --insecure-skip-tls-verify,
// -n/--namespace (and -A when with_all_namespaces).
void AddRemoteFlags(CLI::App& command, RemoteFlags* flags, bool with_all_namespaces = false);

struct Remote {
  std::unique_ptr<client::HttpClient> client;
  std::string ns;  // -n, else the kubeconfig context's namespace, else "default"
};
// Resolves the server: --server, else the kubeconfig (flag, $KUBECONFIG, ~/.kube/config, the
// serve default) at --context or its current-context: the cluster's server and CA, the user's
// token and client certificate (inline *-data or files). kInvalid, one line naming the file,
// when none is found, the file is missing or malformed, or the context is unknown.
Result<Remote> Connect(const RemoteFlags& flags);

// "pods", "pod", "po", "pytorchjob", "pytorchjobs.kubeflow.org", ...; kNotFound with kubectl's
// message (`the server doesn't have a resource type "x"`) otherwise.
Result<const api::ResourceType*> ResolveResource(std::string_view word);
// "pytorchjob.kubeflow.org" / "pod": how kubectl names a kind in "x/name created" lines.
std::string KindName(const api::ResourceType& type);
// An object named on the command line: "TYPE NAME..." or "TYPE/NAME ...".
struct ObjectRef {
  const api::ResourceType* type = nullptr;
  std::string name;
};
// kBadRequest when no name is given or a TYPE/NAME mixes with bare names.
Result<std::vector<ObjectRef>> ParseObjectArgs(const std::vector<std::string>& args);

// kubectl's error line for a failed request: `Error from server (NotFound): ...`, or
// `error: ...` for client-side failures.
std::string ErrorLine(const Status& status);

}  // namespace pjemu::cli
