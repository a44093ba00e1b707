// Registry auth helpers (private to emulator/image): WWW-Authenticate challenges as the
// distribution auth spec writes them, and the registry's {"errors":[...]} body.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace pjemu::image::registry_auth {

struct Challenge {
  std::string scheme;                         // lowercase: "bearer", "basic"
  std::map<std::string, std::string> params;  // lowercase keys: realm, service, scope, error
};

// Every challenge of the given WWW-Authenticate header values (one header may carry several:
// `Bearer realm="r",service="s", Basic realm="x"`).
std::vector<Challenge> ParseChallenges(const std::vector<std::string>& headers);

// "toomanyrequests: rate limit" (docker's errcode wording: code lowercased, then message) for
// each entry of a {"errors":[{"code","message"}]} body, joined by "; "; "" when the body is
// not one.
std::string ServerMessage(const std::string& body);

}  // namespace pjemu::image::registry_auth
