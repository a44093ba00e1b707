// PullSession: one pull (or resolve) of one reference by RegistryClient (registry.h), private
// to emulator/image: its curl handle, the keyring's credentials for the reference and which of
// them is being tried, and the state the client keeps between pulls (ClientState: the
// in-flight pulls, cached tokens, each host's last challenge). The fetch steps live in
// registry.cc; the authorization (challenges, tokens) and containerd's error wording in
// registry_session.cc.
// Thread safety: a PullSession belongs to one thread; ClientState's maps are guarded by mu.
#pragma once

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/image/http_fetch.h"
#include "emulator/image/registry.h"
#include "emulator/image/registry_auth.h"

namespace pjemu::image::registry_detail {

using Clock = std::chrono::steady_clock;
using registry_auth::Challenge;

struct CachedToken {
  std::string authorization;  // "Bearer <token>" or "Basic <base64>"
  Clock::time_point expires;
};

// What a RegistryClient keeps between pulls (its Impl derives from it).
struct ClientState {
  std::shared_ptr<ImageStore> store;
  RegistryOptions options;
  std::mutex mu;
  // Pulls under way by ref.String(): later callers wait on the first's result.
  std::map<std::string, std::shared_future<Result<ImageRecord>>> in_flight;
  // Authorization by host|scope|user, for the token's expires_in (Basic: until refused).
  std::map<std::string, CachedToken> tokens;
  // The last challenge each host sent, so later requests authorize up front.
  std::map<std::string, Challenge> challenges;

  // kForbidden when options.allowed_registries leaves ref's registry out.
  Status CheckAllowed(const api::ImageReference& ref) const;
};

// A descriptor's string field ("" when absent or not a string).
std::string StringField(const Json& object, const char* field);

class PullSession {
 public:
  PullSession(ClientState& impl, const api::ImageReference& ref,
              std::vector<Credential> credentials);

  struct Resolved {
    std::string digest;
    std::string bytes;  // the manifest when the digest had to come from a GET
    std::string content_type;
  };
  // The digest the reference names now (HEAD; GET and hash when HEAD gives none).
  Result<Resolved> Resolve();
  // Resolve, the index resolved to the platform, config and layers fetched, Commit.
  Result<ImageRecord> Pull(PullStats* stats);

 private:
  // The manifest `digest` names, its bytes verified.
  Result<std::string> FetchManifest(const std::string& digest, std::string* content_type);
  // A config blob into memory, its size and digest verified.
  Result<std::string> FetchSmallBlob(const Json& desc, std::int64_t cap);
  // A layer blob into the store's tmp/, hashed as it arrives, then handed to AddLayer.
  Status FetchLayer(const Json& desc, const std::string& diff_id, PullStats* stats);

  // The username of the credential being tried ("" = anonymous).
  std::string User() const;
  std::string TokenKey() const { return host_ + "|" + scope_ + "|" + User(); }
  // The Authorization header to send now ("" = none): from the host's last challenge, a
  // cached token, or a token fetched now. *fresh says whether it was just obtained.
  Result<std::string> Authorization(bool* fresh);
  // distribution's token auth: GET realm?service=&scope= (Basic credentials when there are
  // some), or the OAuth2 refresh-token POST for an identity token.
  Result<std::string> FetchToken(const Challenge& challenge, const Credential* cred,
                                 int* expires_in);
  // Sends req with the authorization the host asked for, answering one 401 challenge (per
  // credential tried). A final 401 comes back as the Response.
  Result<http::Response> Send(http::Request req);

  // containerd's wording: `failed to resolve reference "R": `, `R: not found`.
  std::string ResolvePrefix() const;
  Status NotFound() const;
  Status ResolveError(const Status& status) const;
  // A non-2xx answer as containerd words it.
  Status StatusError(const std::string& method, const std::string& url,
                     const http::Response& resp) const;
  Status BlobError(const std::string& method, const std::string& url,
                   const http::Response& resp) const;

  ClientState& impl_;
  api::ImageReference ref_;
  std::vector<Credential> credentials_;
  http::HttpFetcher fetcher_;
  std::string host_;
  std::string scope_;
  std::string base_;
  std::size_t cred_index_ = 0;
  std::string auth_error_;
};

}  // namespace pjemu::image::registry_detail
