#include "emulator/apiserver/kubeconfig.h"

#include <nlohmann/json.hpp>

#include "emulator/api/base64.h"

namespace pjemu::apiserver {

// YAML is a superset of JSON strings, so values are written JSON-quoted: no escaping traps.
std::string RenderKubeconfig(const KubeconfigOptions& o) {
  auto q = [](const std::string& s) { return nlohmann::json(s).dump(); };
  std::string out = "apiVersion: v1\nkind: Config\nclusters:\n- name: " + q(o.name) +
                    "\n  cluster:\n    server: " + q(o.server) + "\n";
  if (o.server.rfind("https://", 0) == 0) {
    if (o.ca_pem.empty()) {
      out += "    insecure-skip-tls-verify: true\n";
    } else {
      out += "    certificate-authority-data: " + api::EncodeBase64(o.ca_pem) + "\n";
    }
  }
  out += "contexts:\n- name: " + q(o.name) + "\n  context:\n    cluster: " + q(o.name) +
         "\n    user: " + q(o.name) + "\n    namespace: " + q(o.ns) + "\n";
  out += "current-context: " + q(o.name) + "\nusers:\n- name: " + q(o.name) + "\n  user:";
  std::string user;
  if (o.server.rfind("https://", 0) == 0 && !o.client_certificate_pem.empty()) {
    user += "    client-certificate-data: " + api::EncodeBase64(o.client_certificate_pem) + "\n" +
            "    client-key-data: " + api::EncodeBase64(o.client_key_pem) + "\n";
  }
  if (!o.token.empty()) user += "    token: " + q(o.token) + "\n";
  out += user.empty() ? " {}\n" : "\n" + user;
  return out;
}

}  // namespace pjemu::apiserver
