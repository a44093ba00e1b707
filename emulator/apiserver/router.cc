#include "emulator/apiserver/router.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <array>
#include <cctype>

#include "emulator/apiserver/discovery.h"
#include "emulator/apiserver/field_validation.h"
#include "emulator/apiserver/nonresource.h"
#include "emulator/apiserver/tables.h"

namespace pjemu::apiserver {
namespace {

const Clock& DefaultClock() {
  static const RealClock kClock;
  return kClock;
}

std::array<unsigned char, SHA256_DIGEST_LENGTH> Digest(const std::string& text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
  return out;
}

}  // namespace

HttpResponse ErrorResponse(const Status& status) {
  HttpResponse response;
  response.status = HttpCodeOf(status.code());
  Json body = status.ToStatusJson();
  if (status.code() == Code::kUnauthorized) body.erase("details");
  response.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return response;
}

std::string WarningHeader(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return "299 - \"" + escaped + "\"";
}

Router::Router(store::Store& store, api::PodLogs* logs, RouterOptions options)
    : store_(store),
      logs_(logs),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : DefaultClock()),
      random_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

bool Router::Authorized(const HttpRequest& request, const std::string& path) const {
  if (options_.token.empty()) return true;
  if (path == "/healthz" || path == "/livez" || path == "/readyz") return true;
  // kube-apiserver's bearer authenticator: the header trimmed, split on spaces, the scheme
  // compared without case (the Python client's in-cluster config sends "bearer"), the second
  // part the token.
  std::string header = request.Header("authorization");
  const auto first = header.find_first_not_of(" \t");
  const auto last = header.find_last_not_of(" \t");
  header = first == std::string::npos ? "" : header.substr(first, last - first + 1);
  std::string presented;
  const auto space = header.find(' ');
  if (space != std::string::npos) {
    std::string scheme = header.substr(0, space);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto end = header.find(' ', space + 1);
    if (scheme == "bearer") presented = header.substr(space + 1, end - space - 1);
  }
  // Compare digests in constant time, so neither the content nor the length leaks.
  auto want = Digest(options_.token);
  auto got = Digest(presented);
  if (CRYPTO_memcmp(want.data(), got.data(), want.size()) == 0 && !presented.empty()) return true;
  return options_.accept_token && !presented.empty() && options_.accept_token(presented);
}

HttpResponse Router::Route(const HttpRequest& request) const {
  std::string raw_path = request.target.substr(0, request.target.find('?'));
  for (const Mount& mount : options_.mounts) {
    if (raw_path.rfind(mount.prefix, 0) == 0) {
      return mount.handler(request, Authorized(request, raw_path));
    }
    if (mount.prefix.size() > 1 && raw_path + "/" == mount.prefix) {
      HttpResponse redirect;
      redirect.status = 301;
      redirect.content_type = "text/plain; charset=utf-8";
      redirect.headers.emplace_back("Location", mount.prefix);
      return redirect;
    }
  }
  Query query;
  auto path = ParseTarget(request.target, &query);
  std::string plain_path = path.ok() ? path->path : "";
  if (!Authorized(request, plain_path)) {
    return ErrorResponse(Status(Code::kUnauthorized, "Unauthorized"));
  }
  if (!path.ok()) return ErrorResponse(path.status());
  if (Status depth = CheckJsonDepth(request.body); !depth.ok()) return ErrorResponse(depth);
  if (path->type == nullptr) {
    if (request.method != "GET" && request.method != "HEAD") {
      return ErrorResponse(UnknownPathError());
    }
    if (auto r = ServeDiscovery(path->path, request.Header("accept"), options_.metrics_api)) {
      return *r;
    }
    if (auto r = ServeNonResource(path->path, options_.git_version)) return *r;
    return ErrorResponse(UnknownPathError());
  }
  if (const api::ServedVersion* older = path->type->OlderVersion(path->version)) {
    return RouteOlderVersion(request, *path, query, *older);
  }
  auto response = RouteResource(request, *path, query);
  if (!response.ok()) return ErrorResponse(response.status());
  return std::move(response).value();
}

Result<HttpResponse> Router::RouteResource(const HttpRequest& request, const ApiPath& path,
                                           const Query& query) const {
  const std::string& m = request.method;
  if (path.subresource == "log") {
    if (m != "GET")
      return Status(Code::kMethodNotAllowed,
                    "the server does not allow this method on the requested resource");
    return Logs(path, query);
  }
  if (path.subresource == "scale") return Scale(request, path, query);
  if (path.subresource == "exec" || path.subresource == "attach" ||
      path.subresource == "portforward") {
    return Connect(request, path, query);
  }
  if (path.subresource == "eviction") return Evict(request, path, query);
  if (path.subresource == "binding") return Bind(request, path, query);
  if (path.name.empty()) {
    if (m == "GET" || m == "HEAD") {
      ASSIGN_OR_RETURN(bool watch, query.GetBool("watch"));
      return watch ? Watch(request, path, query) : List(request, path, query);
    }
    if (m == "POST") {
      if (path.ns.empty() && path.type->namespaced) {
        return Status(Code::kMethodNotAllowed,
                      "the server does not allow this method on the requested resource");
      }
      return Create(request, path, query);
    }
    if (m == "DELETE") return DeleteCollection(request, path, query);
  } else {
    if (path.type->namespaced && path.ns.empty()) return UnknownPathError();
    if (m == "GET" || m == "HEAD") return Get(request, path, query);
    if (m == "PUT") return Update(request, path, query);
    if (m == "PATCH") return Patch(request, path, query);
    if (m == "DELETE" && path.subresource.empty()) return Delete(request, path, query);
  }
  return Status(Code::kMethodNotAllowed,
                "the server does not allow this method on the requested resource");
}

}  // namespace pjemu::apiserver
