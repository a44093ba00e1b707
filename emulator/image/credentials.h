// Keyring: registry credentials as the kubelet's credential provider finds them, from a
// Docker config (`~/.docker/config.json`: {"auths": {"<registry>": {"auth": base64(user:pass)}
// or {"username","password"} or {"identitytoken"}}}) and from a pod's imagePullSecrets
// (type kubernetes.io/dockerconfigjson, key .dockerconfigjson; legacy kubernetes.io/dockercfg,
// key .dockercfg, a bare map). Keys match as pkg/credentialprovider/keyring.go matches them:
// the scheme and a /v1/ or /v2/ path dropped; `host[:port][/path]`, host labels may be globs
// (`*.example.com`, same label count), ports equal, the key's path a prefix of the image's;
// `https://index.docker.io/v1/` and `docker.io` serve Docker Hub. Lookup returns every match,
// most specific first.
// Thread safety: immutable after building; Lookup is const.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/image_reference.h"
#include "emulator/common/status.h"

namespace pjemu::image {

struct Credential {
  std::string username;
  std::string password;
  std::string identity_token;  // an OAuth2 refresh token (identitytoken)
  std::string source;          // "secret default/regcred", "/root/.docker/config.json"
};

class Keyring {
 public:
  // Adds the entries of a config.json document ({"auths": {...}}) or a legacy .dockercfg map.
  // kInvalid naming source and key for an `auth` that is not base64(user:pass): "unable to
  // parse auth field, must be formatted as base64(username:password)".
  Status AddDockerConfig(const Json& config, const std::string& source);
  // A pod's pull secret (its JSON). kInvalid for a wrong type or a missing key.
  Status AddPullSecret(const Json& secret);
  // $DOCKER_CONFIG/config.json, else $HOME/.docker/config.json; nothing when absent.
  Status AddUserConfig();
  std::vector<Credential> Lookup(const api::ImageReference& ref) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::string key;  // host[:port][/path], scheme and /v1/ dropped
    Credential credential;
  };
  std::vector<Entry> entries_;
};

}  // namespace pjemu::image
