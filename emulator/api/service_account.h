// Service accounts: the identity a pod talks to the API server with, as a cluster gives it.
//  - Every namespace has a ServiceAccount `default` (kube-controller-manager's serviceaccounts
//    controller; pjemu's in emulator/namespaces).
//  - The kubelet projects a bound token, the cluster's CA and the namespace at
//    kServiceAccountMountPath in every container (the ServiceAccount admission plugin's
//    `kube-api-access-*` volume) unless automountServiceAccountToken is false on the pod (or,
//    when the pod leaves it unset, on its ServiceAccount), and sets KUBERNETES_SERVICE_HOST /
//    KUBERNETES_SERVICE_PORT and the other `kubernetes` Service variables.
//  - The API server accepts those tokens as bearer credentials while their pod exists.
// TokenIssuer is the seam between the kubelet (which asks for tokens, as it calls TokenRequest)
// and the API server's signing key (emulator/apiserver/service_account_token.h).
// Thread safety: constants and pure functions; TokenIssuer implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

inline constexpr char kServiceAccountMountPath[] = "/var/run/secrets/kubernetes.io/serviceaccount";
inline constexpr char kDefaultServiceAccount[] = "default";
// kubeadm's --service-account-issuer, also the API server's audience (--api-audiences).
inline constexpr char kServiceAccountIssuer[] = "https://kubernetes.default.svc.cluster.local";
// What the admission plugin's kube-api-access volume asks for (3607 s: the API server then
// extends the token to a year, --service-account-extend-token-expiration's default, and puts
// the requested lifetime in kubernetes.io.warnafter).
inline constexpr std::int64_t kKubeApiAccessExpirationSeconds = 3607;
inline constexpr std::int64_t kExtendedExpirationSeconds = 365 * 24 * 3600;
// A TokenRequest's default and minimum expirationSeconds.
inline constexpr std::int64_t kDefaultTokenExpirationSeconds = 3600;
inline constexpr std::int64_t kMinTokenExpirationSeconds = 600;

// "system:serviceaccount:<ns>:<name>".
std::string ServiceAccountUsername(const std::string& ns, const std::string& name);
// spec.serviceAccountName, else the deprecated spec.serviceAccount, else "default".
std::string PodServiceAccountName(const Json& pod);
// Whether the kubelet projects the token into the pod's containers: the pod's
// spec.automountServiceAccountToken when set, else the ServiceAccount's (`service_account` may
// be null when unknown), else true.
bool AutomountServiceAccountToken(const Json& pod, const Json* service_account);
// The projected volume the ServiceAccount admission plugin adds (named `name`): token, ca.crt
// from the kube-root-ca.crt ConfigMap, namespace from the downward API.
Json KubeApiAccessVolume(const std::string& name);

// What a bound service-account token says (the claims of kube-apiserver's tokens).
struct TokenClaims {
  std::string issuer;
  std::vector<std::string> audiences;
  std::string ns;
  std::string service_account;
  std::string service_account_uid;
  std::string pod;
  std::string pod_uid;
  std::string node;
  std::string node_uid;
  std::string id;           // jti
  std::int64_t issued_at = 0;  // iat = nbf, seconds since the epoch
  std::int64_t expires_at = 0;
  std::int64_t warn_after = 0;  // 0 = none (the token was not extended)
  std::string Subject() const { return ServiceAccountUsername(ns, service_account); }
};

// A TokenRequest of a pod's ServiceAccount, as the kubelet makes it for a projected
// serviceAccountToken source.
struct TokenRequest {
  std::string ns;
  std::string service_account;
  std::string service_account_uid;
  std::string pod;
  std::string pod_uid;
  std::string node;
  std::string node_uid;
  std::vector<std::string> audiences;  // empty = the API server's own (kServiceAccountIssuer)
  std::int64_t expiration_seconds = kDefaultTokenExpirationSeconds;
};

class TokenIssuer {
 public:
  virtual ~TokenIssuer() = default;
  // A signed JWT for the request (kInvalid for an expiration under 10 minutes).
  virtual Result<std::string> Issue(const TokenRequest& request) = 0;
};

// How a pod reaches the API server (what the kubelet gives every container): the address and
// port of `serve` as the pod's network reaches it, the CA that signed its certificate (ca.crt),
// and the token issuer. A pod network changes `host` only.
// The pod network's gateway (the bridge's address, kubelet/pod_network.h): where pods with a
// network of their own reach the API server, relayed to the host's loopback. The serving
// certificate names it.
inline constexpr char kPodNetworkGateway[] = "10.244.0.1";

struct InClusterAccess {
  std::string host;
  int port = 0;
  std::string ca_pem;
  TokenIssuer* issuer = nullptr;  // not owned; outlives the kubelet
};
// KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT(_HTTPS), KUBERNETES_PORT(_<port>_TCP...),
// the variables the kubelet sets in every container for the `kubernetes` Service.
std::vector<std::pair<std::string, std::string>> KubernetesServiceEnv(const InClusterAccess& a);

}  // namespace pjemu::api
