// Registry pulls: the OCI Distribution API v2 (and Docker Registry v2) over libcurl, as
// containerd's resolver and fetcher do: the manifest by tag or digest (HEAD for its digest,
// then GET with containerd's Accept list), an index / manifest list resolved to the node's
// platform (platform.h), the config and each layer blob fetched into the store's tmp/, its
// size and digest verified, then ImageStore::AddLayer (DiffIDs checked against the config),
// then ImageStore::Commit with the name and the repo digest (name@<digest of what the tag
// named: the index or the manifest>). Layers already in the store are not fetched again.
// Auth: a 401 challenge `Bearer realm=...,service=...,scope=...` gets a token from the realm
// (GET with the scope, Basic credentials from the keyring when it has some, anonymous
// otherwise; `token` or `access_token` of the answer); a `Basic` challenge gets the keyring's
// credentials. Authorization is never sent to another host on a redirect (blob stores
// redirect to a CDN). TLS is verified against the system's CAs (plus options.ca_file); plain
// HTTP only for loopback hosts (localhost, 127.0.0.0/8, [::1]) and options.insecure_registries.
// Errors, worded as containerd's (kubelet's ErrImagePull message):
//   kNotFound     `failed to resolve reference "R": R: not found`
//   kUnauthorized `failed to resolve reference "R": pull access denied, repository does not
//                  exist or may require authorization: server message: insufficient_scope:
//                  authorization failed` / `...: 401 Unauthorized`
//   kUnavailable  `failed to do request: Head "https://h/v2/...": dial tcp: connection refused`
//   kForbidden    `registry "h" is not allowed (PJEMU_ALLOW_REGISTRIES=...)`: no packet sent
//   kInvalid      digest mismatches, unsupported media types (schema 1), hostile layers
// Thread safety: Pull may be called from any thread; concurrent Pulls of one reference in one
// process share one download (the later callers wait for the first's result).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/api/image_reference.h"
#include "emulator/common/status.h"
#include "emulator/image/credentials.h"
#include "emulator/image/platform.h"
#include "emulator/image/store.h"

namespace pjemu::image {

struct RegistryOptions {
  // Hosts (host[:port]) reached over plain HTTP besides loopback (PJEMU_INSECURE_REGISTRIES,
  // comma-separated).
  std::vector<std::string> insecure_registries;
  // When non-empty, the only registry hosts pulled from (PJEMU_ALLOW_REGISTRIES,
  // comma-separated, e.g. "localhost,127.0.0.1" for an air-gapped machine): any other fails
  // at once with kForbidden, no packet sent.
  std::vector<std::string> allowed_registries;
  std::string ca_file;  // extra CA bundle (PEM), "" = none
  Platform platform = Platform::Host();
  long connect_timeout_ms = 10'000;
  long low_speed_seconds = 60;  // abort a transfer slower than 1 byte/s for this long
  std::int64_t max_manifest_bytes = 4 << 20;
  // Reads PJEMU_ALLOW_REGISTRIES and PJEMU_INSECURE_REGISTRIES.
  static RegistryOptions FromEnvironment();
};

struct PullStats {
  std::int64_t bytes_fetched = 0;  // blob bytes downloaded (layers already present: 0)
  int layers_fetched = 0;
};

class RegistryClient {
 public:
  RegistryClient(std::shared_ptr<ImageStore> store, RegistryOptions options);
  ~RegistryClient();
  // Pulls `ref` (normalized) into the store and returns its record.
  Result<ImageRecord> Pull(const api::ImageReference& ref, const Keyring& keyring,
                           PullStats* stats = nullptr);
  // The digest the registry names for ref now (HEAD of the manifest), without fetching.
  Result<std::string> Resolve(const api::ImageReference& ref, const Keyring& keyring);
  const RegistryOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pjemu::image
