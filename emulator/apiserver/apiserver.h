// ApiServer: the Kubernetes REST API over HTTP(S) on top of the Store, so that real kubectl
// (1.20, 1.27-1.33) and the official Python client work unmodified. Flow:
// listener (accept) -> session (read, Route, write; chunked streams for watches and log
// follows; WebSocket upgrades for exec and port-forward) -> Router (pure) -> Store / PodLogs /
// PodExec. The only public header of emulator/apiserver.
// Thread safety: Start/Stop/port from one owning thread; requests are served on the server's
// own io threads, which touch only the thread-safe Store and PodLogs.
//
// Known deviations from kube-apiserver: no protobuf (JSON is answered to every Accept); no
// HTTP/2 (TLS selects no ALPN protocol, so clients speak HTTP/1.1); `limit`/`continue` are
// ignored (one page); server-side apply is an upsert with merge-patch semantics (no
// managedFields); fieldValidation checks the schema levels listed in field_validation.h;
// a PodDisruptionBudget's status is computed from the store when it is read or an eviction is
// decided (no disruption controller), so watch events carry it as stored; attach follows the
// container's log file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/api/exec.h"
#include "emulator/api/logs.h"
#include "emulator/api/resource_usage.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/apiserver/service_account_token.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver {

// Kubernetes' numbers where it has one (kube-apiserver's secure_serving.go and request
// timeout): a connection is closed, without an answer, when it stays silent for idle_timeout
// between requests, when a request's line and headers take longer than header_timeout, or its
// body longer than body_timeout (so a slowloris client holds a connection for 32 s at most).
struct ApiServerLimits {
  std::size_t max_body_bytes = 3 * 1024 * 1024;  // larger request bodies get 413
  // The request line and headers (MaxHeaderBytes): larger gets 431, or 414 when the request
  // line alone is larger.
  std::size_t max_header_bytes = 1024 * 1024;
  Duration idle_timeout = std::chrono::seconds(90);         // IdleTimeout
  Duration header_timeout = std::chrono::seconds(32);       // ReadHeaderTimeout
  Duration body_timeout = std::chrono::seconds(60);         // --request-timeout
  Duration write_stall_timeout = std::chrono::seconds(60);  // a stream the client stops reading
  std::size_t max_connections = 10000;  // further connections are closed at accept
  std::size_t max_watches = 8000;       // further watches get 429 TooManyRequests
  // --min-request-timeout: a watch without timeoutSeconds ends after this times a random factor
  // in [1, 2), as kube-apiserver spreads its watches' reconnections.
  Duration min_request_timeout = std::chrono::seconds(1800);
};

struct ApiServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = an ephemeral port (see port())
  std::string token;       // "" = no authentication; else Bearer token, and TLS is on
  bool tls = false;        // serve https: a certificate signed by the CA below
  // Where the CA lives (ca.crt, ca.key; made at the first start): `serve --data-dir D` keeps it
  // in D/pki so a restart keeps kubeconfigs valid. "" = a fresh CA in memory.
  std::string pki_dir;
  std::string git_version = "v1.30.0";  // /version (full semver)
  const Clock* clock = nullptr;         // Table ages and log sinceSeconds; nullptr = real time
  int threads = 1;                      // io threads
  ApiServerLimits limits;
  std::vector<Mount> mounts;  // extra handlers under path prefixes (the console's /ui/)
  // pods/exec runs commands here (the kubelet; not owned, must outlive the server); nullptr:
  // exec gets 400.
  api::PodExec* exec = nullptr;
  // Service-account tokens accepted as bearer credentials beside `token` while the pod and
  // ServiceAccount they are bound to exist (not owned; nullptr = none).
  const ServiceAccountTokens* service_account_tokens = nullptr;
  // The containers' CPU and memory: served as metrics.k8s.io/v1beta1 (metrics_api.h) when set
  // (not owned; must outlive the server).
  const api::ResourceUsage* usage = nullptr;
};

class ApiServer {
 public:
  // `logs` may be null: pod log requests then get 400.
  ApiServer(store::Store& store, api::PodLogs* logs, ApiServerOptions options);
  ~ApiServer();  // Stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds, listens and starts the io threads; an error names the address that failed.
  Status Start();
  // Closes the listener and every connection and joins the io threads. Idempotent.
  void Stop();
  std::uint16_t port() const;
  bool tls() const;
  // "http://127.0.0.1:PORT" or "https://...".
  std::string url() const;
  // The CA certificate (PEM) that signed the serving certificate, when tls(); "" otherwise.
  const std::string& certificate_pem() const;
  // A kubeconfig for this server (RenderKubeconfig); `trust_certificate` embeds the CA
  // as certificate-authority-data instead of insecure-skip-tls-verify, and the admin's client
  // certificate (CN=kubernetes-admin, O=system:masters, signed by the CA; the server does not
  // ask for it) so that kubectl does not prompt for a password when there is no token.
  std::string Kubeconfig(const std::string& ns = "default", bool trust_certificate = false) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pjemu::apiserver
