#include "emulator/image/credentials.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "emulator/api/base64.h"

namespace pjemu::image {
namespace credentials_detail {

constexpr char kAuthFormatError[] =
    "unable to parse auth field, must be formatted as base64(username:password)";

// config.go's decodeDockerConfigFieldAuth: padded text decodes as StdEncoding, unpadded as
// RawStdEncoding (so both forms of one value are accepted).
Result<std::pair<std::string, std::string>> DecodeAuth(const std::string& field) {
  std::string text = field;
  const bool padded = !text.empty() && text.back() == '=';
  if (!padded) {
    if (text.find('=') != std::string::npos || text.size() % 4 == 1) {
      std::size_t bad = text.find('=') != std::string::npos ? text.find('=') : text.size();
      return Status(Code::kInvalid, fmt::format("illegal base64 data at input byte {}", bad));
    }
    while (text.size() % 4 != 0) text += '=';
  }
  std::size_t bad = 0;
  std::optional<std::string> decoded = api::DecodeBase64(text, &bad);
  if (!decoded) {
    return Status(Code::kInvalid, fmt::format("illegal base64 data at input byte {}", bad));
  }
  const std::size_t colon = decoded->find(':');
  if (colon == std::string::npos) return Status(Code::kInvalid, kAuthFormatError);
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

// keyring.go's Add: "https://" prepended when there is no scheme, the URL's host kept, and a
// path starting /v1/ or /v2/ cut to what follows the version ("/" alone means none).
std::string KeyOf(const std::string& location) {
  std::string rest = location;
  for (const char* scheme : {"https://", "http://"}) {
    if (rest.rfind(scheme, 0) == 0) {
      rest = rest.substr(std::char_traits<char>::length(scheme));
      break;
    }
  }
  const std::size_t slash = rest.find('/');
  std::string host = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  // url.Parse drops a query and a fragment from the path.
  path = path.substr(0, path.find_first_of("?#"));
  if (path.rfind("/v2/", 0) == 0 || path.rfind("/v1/", 0) == 0) path = path.substr(3);
  if (!path.empty() && path != "/") return host + path;
  return host;
}

struct SplitKey {
  std::vector<std::string> labels;
  std::string port;
  std::string path;  // "" or "/..."
};

// keyring.go's ParseSchemelessURL + SplitURL: host labels, port, path.
SplitKey Split(const std::string& key) {
  SplitKey out;
  const std::size_t slash = key.find('/');
  std::string host = key.substr(0, slash);
  if (slash != std::string::npos) out.path = key.substr(slash);
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    const std::size_t close = host.find(']');
    if (close != std::string::npos && close + 1 < host.size() && host[close + 1] == ':') {
      out.port = host.substr(close + 2);
      host = host.substr(1, close - 1);
    }
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    const std::size_t colon = host.find(':');
    out.port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = host.find('.', start);
    out.labels.push_back(host.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

// keyring.go's URLsMatch: equal ports, equal label counts, the key's path a prefix of the
// image's (a string prefix, as Go's strings.HasPrefix), each label a filepath.Match glob.
bool KeyMatches(const std::string& key, const std::string& image) {
  const SplitKey glob = Split(key);
  const SplitKey target = Split(image);
  if (glob.port != target.port) return false;
  if (glob.labels.size() != target.labels.size()) return false;
  if (target.path.rfind(glob.path, 0) != 0) return false;
  for (std::size_t i = 0; i < glob.labels.size(); ++i) {
    if (fnmatch(glob.labels[i].c_str(), target.labels[i].c_str(), 0) != 0) return false;
  }
  return true;
}

// Keys that name Docker Hub (keyring.go's defaultRegistryHost and the aliases users write).
bool IsDockerHubHost(const std::string& host) {
  return host == "index.docker.io" || host == "docker.io" || host == "registry-1.docker.io";
}

Result<Json> ParseJsonText(const std::string& text, const std::string& what) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status(Code::kInvalid, what + ": invalid JSON");
  return parsed;
}

std::string MetadataField(const Json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto f = meta->find(field);
  return f != meta->end() && f->is_string() ? f->get<std::string>() : "";
}

}  // namespace credentials_detail

namespace credd = credentials_detail;

Status Keyring::AddDockerConfig(const Json& config, const std::string& source) {
  if (!config.is_object()) {
    return Status(Code::kInvalid, source + ": a docker config must be a JSON object");
  }
  const Json* auths = &config;
  if (auto it = config.find("auths"); it != config.end()) {
    if (!it->is_object()) return Status(Code::kInvalid, source + ": \"auths\" must be an object");
    auths = &*it;
  }
  std::vector<Entry> added;
  for (const auto& item : auths->items()) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const std::string& location = item.key();
    const Json& ident = item.value();
    if (!ident.is_object()) continue;  // config.json's other keys (credsStore, ...) in a bare map
    Credential credential;
    credential.source = source;
    auto text = [&](const char* field) {
      auto f = ident.find(field);
      return f != ident.end() && f->is_string() ? f->get<std::string>() : std::string();
    };
    credential.username = text("username");
    credential.password = text("password");
    credential.identity_token = text("identitytoken");
    if (const std::string auth = text("auth"); !auth.empty()) {
      auto decoded = credd::DecodeAuth(auth);
      if (!decoded.ok()) {
        return Status(Code::kInvalid, fmt::format("{}: entry \"{}\": {}", source, location,
                                                  decoded.status().message()));
      }
      credential.username = decoded->first;
      credential.password = decoded->second;
    }
    added.push_back(Entry{credd::KeyOf(location), std::move(credential)});
  }
  for (Entry& e : added) entries_.push_back(std::move(e));
  // keyring.go keeps its index reverse-sorted so that longer (more specific) keys of one host
  // come first; equal keys keep the order they were added in.
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.key > b.key; });
  return Status::Ok();
}

Status Keyring::AddPullSecret(const Json& secret) {
  if (!secret.is_object()) return Status(Code::kInvalid, "pull secret: not a JSON object");
  const std::string ns = credd::MetadataField(secret, "namespace");
  const std::string name = credd::MetadataField(secret, "name");
  const std::string source = fmt::format("secret {}/{}", ns.empty() ? "default" : ns, name);
  const auto type_it = secret.find("type");
  const std::string type =
      type_it != secret.end() && type_it->is_string() ? type_it->get<std::string>() : "";
  std::string key;
  if (type == "kubernetes.io/dockerconfigjson") {
    key = ".dockerconfigjson";
  } else if (type == "kubernetes.io/dockercfg") {
    key = ".dockercfg";
  } else {
    return Status(Code::kInvalid,
                  fmt::format("{}: type \"{}\" is not kubernetes.io/dockerconfigjson or "
                              "kubernetes.io/dockercfg",
                              source, type));
  }
  std::string text;
  bool found = false;
  if (auto data = secret.find("data"); data != secret.end() && data->is_object()) {
    if (auto v = data->find(key); v != data->end() && v->is_string()) {
      std::size_t bad = 0;
      std::optional<std::string> decoded = api::DecodeBase64(v->get<std::string>(), &bad);
      if (!decoded) {
        return Status(
            Code::kInvalid,
            fmt::format("{}: data[{}]: illegal base64 data at input byte {}", source, key, bad));
      }
      text = std::move(*decoded);
      found = true;
    }
  }
  if (!found) {
    if (auto sd = secret.find("stringData"); sd != secret.end() && sd->is_object()) {
      if (auto v = sd->find(key); v != sd->end() && v->is_string()) {
        text = v->get<std::string>();
        found = true;
      }
    }
  }
  if (!found || text.empty()) {
    return Status(Code::kInvalid,
                  fmt::format("{}: missing key \"{}\" for type {}", source, key, type));
  }
  ASSIGN_OR_RETURN(Json config, credd::ParseJsonText(text, source + ": data[" + key + "]"));
  if (type == "kubernetes.io/dockerconfigjson") {
    if (!config.is_object() || !config.contains("auths")) {
      return Status(Code::kInvalid, source + ": data[" + key + "]: no \"auths\" object");
    }
  }
  return AddDockerConfig(config, source);
}

Status Keyring::AddUserConfig() {
  std::string path;
  if (const char* dir = std::getenv("DOCKER_CONFIG"); dir && *dir) {
    path = std::string(dir) + "/config.json";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.docker/config.json";
  } else {
    return Status::Ok();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Ok();
  std::stringstream buffer;
  buffer << in.rdbuf();
  ASSIGN_OR_RETURN(Json config, credd::ParseJsonText(buffer.str(), path));
  // A config.json without "auths" (credsStore only, say) has nothing for the keyring.
  if (!config.is_object() || !config.contains("auths")) return Status::Ok();
  return AddDockerConfig(Json{{"auths", config["auths"]}}, path);
}

std::vector<Credential> Keyring::Lookup(const api::ImageReference& ref) const {
  const std::string image = ref.domain + "/" + ref.path;
  std::vector<Credential> out;
  for (const Entry& e : entries_) {
    if (credd::KeyMatches(e.key, image)) out.push_back(e.credential);
  }
  if (!out.empty() || ref.domain != "docker.io") return out;
  // keyring.go's isDefaultRegistryMatch: Docker Hub images also take the credentials of
  // index.docker.io (what `https://index.docker.io/v1/` becomes) and its aliases.
  for (const Entry& e : entries_) {
    const std::size_t slash = e.key.find('/');
    const std::string host = e.key.substr(0, slash);
    const std::string path = slash == std::string::npos ? "" : e.key.substr(slash);
    if (credd::IsDockerHubHost(host) && ("/" + ref.path).rfind(path, 0) == 0) {
      out.push_back(e.credential);
    }
  }
  return out;
}

}  // namespace pjemu::image
