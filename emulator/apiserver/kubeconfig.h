// Renders a kubeconfig for a running API server (`pjemu serve --kubeconfig F`): plain http with
// no user, or https with either the cluster's CA as certificate-authority-data or
// insecure-skip-tls-verify, plus the bearer token and the admin's client certificate (kubectl
// prompts for a user name and password over https when a user has no credentials at all).
// Thread safety: pure function.
#pragma once

#include <string>

namespace pjemu::apiserver {

struct KubeconfigOptions {
  std::string server;          // "http://127.0.0.1:18080" or "https://127.0.0.1:18443"
  std::string token;           // "" = no credentials
  std::string ca_pem;          // https: trust this certificate; "" = insecure-skip-tls-verify
  std::string client_certificate_pem;  // https: client-certificate-data; "" = none
  std::string client_key_pem;          // its client-key-data
  std::string name = "pjemu";  // cluster, context and user name
  std::string ns = "default";  // the context's namespace
};

std::string RenderKubeconfig(const KubeconfigOptions& options);

}  // namespace pjemu::apiserver
