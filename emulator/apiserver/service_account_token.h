// ServiceAccountTokens: kube-apiserver's service-account token signer and authenticator, with
// OpenSSL. A token is a JWS (compact form) signed ES256 with the cluster's service-account key
// (EC P-256; kubeadm keeps it as pki/sa.key and sa.pub, and so does `serve --data-dir D` in
// D/pki), its header naming the key (`kid`: the unpadded base64url SHA-256 of the public key's
// DER, as kube-apiserver computes it), its claims those of a bound token:
//   iss, sub system:serviceaccount:<ns>:<sa>, aud [...], iat = nbf, exp, jti,
//   kubernetes.io: {namespace, pod {name, uid}, serviceaccount {name, uid}, node {name, uid},
//                   warnafter}
// A request for kube-api-access's 3607 s with the API server's own audience is extended to a
// year with warnafter at the requested end (--service-account-extend-token-expiration).
// Verify checks the signature (and the algorithm), the issuer, that the audience includes
// kServiceAccountIssuer, and nbf/exp with kube-apiserver's 60 s leeway; whether the bound pod
// and ServiceAccount still exist is the caller's check (the API server's, against its store).
// Thread safety: immutable after construction; Issue and Verify may run on any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/api/service_account.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver {

class ServiceAccountTokens final : public api::TokenIssuer {
 public:
  // The key in `dir` (sa.key, sa.pub: made there, key 0600, when neither exists; one missing
  // or unreadable is an error naming the file). dir "" = a fresh key in memory.
  static Result<std::unique_ptr<ServiceAccountTokens>> LoadOrCreate(const std::string& dir,
                                                                    const Clock& clock);
  // From a PEM private key (tests).
  static Result<std::unique_ptr<ServiceAccountTokens>> FromPrivateKey(const std::string& pem,
                                                                      const Clock& clock);
  ~ServiceAccountTokens() override;

  Result<std::string> Issue(const api::TokenRequest& request) override;
  // The token's claims, or kUnauthorized naming what is wrong (never the token itself).
  Result<api::TokenClaims> Verify(std::string_view token) const;
  const std::string& key_id() const { return key_id_; }

 private:
  struct Key;
  ServiceAccountTokens(std::unique_ptr<Key> key, const Clock& clock);
  std::unique_ptr<Key> key_;
  const Clock& clock_;
  std::string key_id_;
};

// kube-apiserver's service-account authenticator: a token Verify accepts whose ServiceAccount
// still exists (with the uid in the token) and, for a pod-bound token, whose pod still exists
// with that uid. kUnauthorized naming what failed.
Result<api::TokenClaims> AuthenticateServiceAccount(const ServiceAccountTokens& tokens,
                                                    const store::Store& store,
                                                    std::string_view token);

// Base64url without padding (RFC 7515), and its inverse (nullopt for bad input).
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace pjemu::apiserver
