// Renders a kubeconfig for a running API server (`pjemu serve --kubeconfig F`): plain http with
// no user, or https with either the server's certificate as certificate-authority-data or
// insecure-skip-tls-verify, plus the bearer token.
// Thread safety: pure function.
#pragma once

#include <string>

namespace pjemu::apiserver {

struct KubeconfigOptions {
  std::string server;          // "http://127.0.0.1:18080" or "https://127.0.0.1:18443"
  std::string token;           // "" = no credentials
  std::string ca_pem;          // https: trust this certificate; "" = insecure-skip-tls-verify
  std::string name = "pjemu";  // cluster, context and user name
  std::string ns = "default";  // the context's namespace
};

std::string RenderKubeconfig(const KubeconfigOptions& options);

}  // namespace pjemu::apiserver
