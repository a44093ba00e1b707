#include "emulator/api/service_account.h"

#include "emulator/api/json_fields.h"

namespace pjemu::api {

std::string ServiceAccountUsername(const std::string& ns, const std::string& name) {
  return "system:serviceaccount:" + ns + ":" + name;
}

std::string PodServiceAccountName(const Json& pod) {
  const Json& spec = ObjectOr(Field(pod, "spec"));
  for (const char* key : {"serviceAccountName", "serviceAccount"}) {
    auto it = spec.find(key);
    if (it != spec.end() && it->is_string() && !it->get<std::string>().empty()) return *it;
  }
  return kDefaultServiceAccount;
}

bool AutomountServiceAccountToken(const Json& pod, const Json* service_account) {
  const Json& spec = ObjectOr(Field(pod, "spec"));
  auto it = spec.find("automountServiceAccountToken");
  if (it != spec.end() && it->is_boolean()) return it->get<bool>();
  if (service_account != nullptr && service_account->is_object()) {
    auto sa = service_account->find("automountServiceAccountToken");
    if (sa != service_account->end() && sa->is_boolean()) return sa->get<bool>();
  }
  return true;
}

Json KubeApiAccessVolume(const std::string& name) {
  Json token = {{"serviceAccountToken",
                 {{"expirationSeconds", kKubeApiAccessExpirationSeconds}, {"path", "token"}}}};
  Json ca = {{"configMap",
              {{"name", "kube-root-ca.crt"},
               {"items", Json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}};
  Json ns = {{"downwardAPI",
              {{"items", Json::array({{{"path", "namespace"},
                                       {"fieldRef",
                                        {{"apiVersion", "v1"},
                                         {"fieldPath", "metadata.namespace"}}}}})}}}};
  return {{"name", name},
          {"projected",
           {{"defaultMode", 0644}, {"sources", Json::array({token, ca, ns})}}}};
}

std::vector<std::pair<std::string, std::string>> KubernetesServiceEnv(const InClusterAccess& a) {
  const std::string port = std::to_string(a.port);
  const std::string url = "tcp://" + a.host + ":" + port;
  const std::string prefix = "KUBERNETES_PORT_" + port + "_TCP";
  return {{"KUBERNETES_SERVICE_HOST", a.host},
          {"KUBERNETES_SERVICE_PORT", port},
          {"KUBERNETES_SERVICE_PORT_HTTPS", port},
          {"KUBERNETES_PORT", url},
          {prefix, url},
          {prefix + "_PROTO", "tcp"},
          {prefix + "_PORT", port},
          {prefix + "_ADDR", a.host}};
}

}  // namespace pjemu::api
