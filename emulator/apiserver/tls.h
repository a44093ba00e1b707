// TLS material for the API server: a self-signed certificate (EC P-256, SAN 127.0.0.1 and
// localhost) generated with OpenSSL at start, so kubectl sends bearer tokens (it only does
// over https). The PEM goes into the kubeconfig or the client's trust.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::apiserver {

struct TlsMaterial {
  std::string certificate_pem;
  std::string private_key_pem;
};

// A fresh key and a certificate valid for one year for `host` (an IP or a DNS name) plus
// 127.0.0.1 and localhost.
Result<TlsMaterial> GenerateSelfSigned(const std::string& host);

}  // namespace pjemu::apiserver
