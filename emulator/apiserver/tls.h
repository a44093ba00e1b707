// TLS material for the API server, made with OpenSSL as a cluster's installer makes it: a CA
// (EC P-256, ten years) and a serving certificate it signs (one year, SAN 127.0.0.1, localhost
// and the listen address). The CA is what clients trust (the kubeconfig's
// certificate-authority-data); it is kept in a folder when one is given (`serve --data-dir`), so
// a restart keeps kubeconfigs valid, while the serving certificate is issued afresh at each start.
// Thread safety: pure functions (LoadOrCreateCa touches only its folder).
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::apiserver {

struct TlsMaterial {
  std::string certificate_pem;
  std::string private_key_pem;
};

// A fresh CA: key and self-signed certificate (CN pjemu-ca, CA:TRUE, keyCertSign).
Result<TlsMaterial> GenerateCa();
// The CA in `dir` (ca.crt, ca.key), made there (0700 folder, 0600 key) when neither file exists.
// Errors name the file: one of the two missing, unreadable PEM, or a key that does not match.
Result<TlsMaterial> LoadOrCreateCa(const std::string& dir);
// A fresh key and a client certificate signed by `ca` for user `cn` in group `org` (kubeadm's
// and kind's admin: CN=kubernetes-admin, O=system:masters), valid for one year.
Result<TlsMaterial> IssueClientCertificate(const TlsMaterial& ca, const std::string& cn,
                                           const std::string& org);
// A fresh key and a serving certificate signed by `ca`, valid for one year, for `host` (an IP
// or a DNS name) plus 127.0.0.1 and localhost.
Result<TlsMaterial> IssueServingCertificate(const TlsMaterial& ca, const std::string& host);

}  // namespace pjemu::apiserver
