#include "emulator/image/registry_session.h"

#include <fmt/format.h>

#include "emulator/api/base64.h"

namespace pjemu::image::registry_detail {

// --- auth -----------------------------------------------------------------------------

std::string PullSession::User() const {
  return cred_index_ < credentials_.size() ? credentials_[cred_index_].username : "";
}

// The Authorization header to send now ("" = none): from the host's last challenge, a
// cached token, or a token fetched now. *fresh says whether it was just obtained.
Result<std::string> PullSession::Authorization(bool* fresh) {
  *fresh = false;
  Challenge challenge;
  {
    std::lock_guard<std::mutex> lock(impl_.mu);
    auto c = impl_.challenges.find(host_);
    if (c == impl_.challenges.end()) return std::string();
    challenge = c->second;
    auto t = impl_.tokens.find(TokenKey());
    if (t != impl_.tokens.end()) {
      if (Clock::now() < t->second.expires) return t->second.authorization;
      impl_.tokens.erase(t);
    }
  }
  const Credential* cred = cred_index_ < credentials_.size() ? &credentials_[cred_index_] : nullptr;
  std::string authorization;
  Clock::duration lifetime = std::chrono::hours(24 * 365);
  if (challenge.scheme == "basic") {
    if (!cred || cred->username.empty()) return std::string();
    authorization = "Basic " + api::EncodeBase64(cred->username + ":" + cred->password);
  } else if (challenge.scheme == "bearer") {
    int expires_in = 60;
    ASSIGN_OR_RETURN(std::string token, FetchToken(challenge, cred, &expires_in));
    authorization = "Bearer " + token;
    lifetime = std::chrono::seconds(std::max(expires_in, 1));
  } else {
    return std::string();
  }
  *fresh = true;
  std::lock_guard<std::mutex> lock(impl_.mu);
  impl_.tokens[TokenKey()] = CachedToken{authorization, Clock::now() + lifetime};
  return authorization;
}

// distribution's token auth: GET realm?service=&scope= (Basic credentials when there are
// some), or the OAuth2 refresh-token POST for an identity token.
Result<std::string> PullSession::FetchToken(const Challenge& challenge, const Credential* cred,
                                            int* expires_in) {
  auto param = [&](const char* key) {
    auto it = challenge.params.find(key);
    return it == challenge.params.end() ? std::string() : it->second;
  };
  const std::string realm = param("realm");
  if (realm.empty()) {
    return Status(Code::kUnauthorized,
                  "failed to authorize: no realm specified for token auth challenge");
  }
  std::vector<std::string> scopes = {scope_};
  if (const std::string s = param("scope"); !s.empty() && s != scope_) scopes.push_back(s);
  const std::string service = param("service");
  http::Request req;
  std::string kind = "anonymous token";
  if (cred && !cred->identity_token.empty()) {
    kind = "oauth token";
    req.method = "POST";
    req.url = realm;
    req.headers = {"Content-Type: application/x-www-form-urlencoded"};
    req.post_body = "grant_type=refresh_token&client_id=containerd-client&refresh_token=" +
                    http::UrlEscape(cred->identity_token);
    if (!service.empty()) req.post_body += "&service=" + http::UrlEscape(service);
    for (const std::string& s : scopes) req.post_body += "&scope=" + http::UrlEscape(s);
  } else {
    std::string query;
    if (!service.empty()) query += "service=" + http::UrlEscape(service);
    for (const std::string& s : scopes) {
      query += (query.empty() ? "" : "&") + std::string("scope=") + http::UrlEscape(s);
    }
    req.url = realm + (realm.find('?') == std::string::npos ? "?" : "&") + query;
    if (cred && !cred->username.empty()) {
      kind = "token";
      req.headers.push_back("Authorization: Basic " +
                            api::EncodeBase64(cred->username + ":" + cred->password));
    }
  }
  req.max_body = 1 << 20;
  auto resp = fetcher_.Do(req);
  if (!resp.ok()) {
    return Status(resp.status().code(),
                  "failed to authorize: failed to fetch " + kind + ": " + resp.status().message());
  }
  if (resp->status < 200 || resp->status >= 300) {
    std::string text = fmt::format("unexpected status from {} request to {}: {}", req.method,
                                   req.url, http::StatusLine(resp->status));
    if (std::string server = registry_auth::ServerMessage(resp->body); !server.empty()) {
      text += ": " + server;
    }
    const Code code =
        resp->status == 401 || resp->status == 403 ? Code::kUnauthorized : Code::kUnavailable;
    return Status(code, "failed to authorize: failed to fetch " + kind + ": " + text);
  }
  Json answer = Json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  std::string token = StringField(answer, "token");
  if (token.empty()) token = StringField(answer, "access_token");
  if (token.empty()) {
    return Status(Code::kUnauthorized,
                  "failed to authorize: the token server at " + realm + " answered no token");
  }
  if (answer.is_object() && answer.contains("expires_in") &&
      answer["expires_in"].is_number_integer() && answer["expires_in"].get<int>() > 0) {
    *expires_in = answer["expires_in"].get<int>();
  }
  return token;
}

// Sends req with the authorization the host asked for, answering one 401 challenge (per
// credential tried). A final 401 comes back as the Response.
Result<http::Response> PullSession::Send(http::Request req) {
  const std::size_t base_headers = req.headers.size();
  const std::size_t max_tries = credentials_.size() + 3;
  for (std::size_t attempt = 0;; ++attempt) {
    bool fresh = false;
    ASSIGN_OR_RETURN(std::string authorization, Authorization(&fresh));
    req.headers.resize(base_headers);
    if (!authorization.empty()) req.headers.push_back("Authorization: " + authorization);
    ASSIGN_OR_RETURN(http::Response resp, fetcher_.Do(req));
    if (resp.status != 401 || attempt + 1 >= max_tries) return resp;
    std::vector<Challenge> challenges = registry_auth::ParseChallenges(resp.www_authenticate);
    const Challenge* chosen = nullptr;
    for (const Challenge& c : challenges) {
      if (c.scheme == "bearer") chosen = &c;
    }
    for (const Challenge& c : challenges) {
      if (!chosen && c.scheme == "basic") chosen = &c;
    }
    if (!chosen) return resp;
    {
      std::lock_guard<std::mutex> lock(impl_.mu);
      impl_.challenges[host_] = *chosen;
      impl_.tokens.erase(TokenKey());
    }
    if (authorization.empty()) {
      // First challenge: answer it, unless it is Basic and there is nothing to answer with.
      if (chosen->scheme == "basic" && User().empty()) return resp;
      continue;
    }
    // Refused with credentials: containerd's "server message" when the challenge says why.
    if (auto e = chosen->params.find("error"); e != chosen->params.end() && !e->second.empty()) {
      auth_error_ = "server message: " + e->second + ": authorization failed";
    }
    if (fresh) {
      if (cred_index_ + 1 >= credentials_.size()) return resp;
      ++cred_index_;  // the next matching credential, as the kubelet tries them all
    }
  }
}

// --- errors ---------------------------------------------------------------------------

std::string PullSession::ResolvePrefix() const {
  return fmt::format("failed to resolve reference \"{}\": ", ref_.String());
}

Status PullSession::NotFound() const {
  return Status(Code::kNotFound, fmt::format("{}: not found", ref_.String()));
}

Status PullSession::ResolveError(const Status& status) const {
  if (status.ok()) return status;
  return Status(status.code(), ResolvePrefix() + status.message());
}

// A non-2xx answer as containerd words it.
Status PullSession::StatusError(const std::string& method, const std::string& url,
                                const http::Response& resp) const {
  std::string text = fmt::format("unexpected status from {} request to {}: {}", method, url,
                                 http::StatusLine(resp.status));
  if (std::string server = registry_auth::ServerMessage(resp.body); !server.empty()) {
    text += ": " + server;
  }
  if (resp.status == 401 || resp.status == 403) {
    return Status(Code::kUnauthorized,
                  "pull access denied, repository does not exist or may require "
                  "authorization: " +
                      (auth_error_.empty() ? text : auth_error_));
  }
  if (resp.status == 429 || resp.status >= 500) return Status(Code::kUnavailable, text);
  if (resp.status == 404) return Status(Code::kNotFound, text);
  return Status(Code::kInvalid, text);
}

Status PullSession::BlobError(const std::string& method, const std::string& url,
                              const http::Response& resp) const {
  if (resp.status == 404) {
    return Status(Code::kNotFound, fmt::format("failed to copy: httpReadSeeker: failed open: "
                                               "content at {} not found: not found",
                                               url));
  }
  Status s = StatusError(method, url, resp);
  return Status(s.code(), "failed to copy: httpReadSeeker: failed open: " + s.message());
}

}  // namespace pjemu::image::registry_detail
