#include "emulator/cli/remote.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "emulator/api/base64.h"

namespace pjemu::cli {
namespace {

std::string Home() {
  const char* home = std::getenv("HOME");
  return home ? home : "";
}

// The kubeconfig to read, or "" when none exists.
std::string FindKubeconfig(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(':', start);
      std::string path = list.substr(start, end == std::string::npos ? end : end - start);
      if (!path.empty() && std::filesystem::exists(path)) return path;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  std::string home_config = Home() + "/.kube/config";
  if (!Home().empty() && std::filesystem::exists(home_config)) return home_config;
  std::string serve = DefaultServeKubeconfig();
  if (std::filesystem::exists(serve)) return serve;
  return "";
}

// The field of the list item with that name; an undefined node (false) when there is none.
YAML::Node Named(const YAML::Node& list, const std::string& name, const char* field) {
  const YAML::Node empty;
  const YAML::Node none = empty["none"];  // a missing key of a const node: undefined
  if (!list || !list.IsSequence()) return none;
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item[field];
  }
  return none;
}

// Standard base64 (a kubeconfig's *-data fields), whitespace ignored; nullopt when malformed.
std::optional<std::string> DecodeDataField(std::string text) {
  std::erase_if(text, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return api::DecodeBase64(text);
}

// The cluster entry's TLS settings: certificate-authority-data, certificate-authority (a file,
// relative to the kubeconfig's folder as kubectl resolves it), insecure-skip-tls-verify.
Status ReadClusterTls(const YAML::Node& cluster, const std::string& path,
                      client::HttpClientOptions* options) {
  options->insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>(false);
  if (cluster["certificate-authority-data"]) {
    auto pem = DecodeDataField(cluster["certificate-authority-data"].as<std::string>());
    if (!pem) return Status(Code::kInvalid, path + ": certificate-authority-data is not base64");
    options->ca_pem = *pem;
  } else if (cluster["certificate-authority"]) {
    std::filesystem::path ca = cluster["certificate-authority"].as<std::string>();
    if (ca.is_relative()) ca = std::filesystem::path(path).parent_path() / ca;
    std::ifstream in(ca);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return Status(Code::kInvalid, path + ": cannot read certificate-authority " + ca.string());
    options->ca_pem = text.str();
  }
  return Status::Ok();
}

// A kubeconfig credential given inline (FIELD-data, base64) or as a file (FIELD, relative to the
// kubeconfig's folder); "" when neither is set.
Result<std::string> ReadCredential(const YAML::Node& node, const std::string& field,
                                   const std::string& path) {
  if (node[field + "-data"]) {
    auto pem = DecodeDataField(node[field + "-data"].as<std::string>());
    if (!pem) return Status(Code::kInvalid, path + ": " + field + "-data is not base64");
    return *pem;
  }
  if (!node[field]) return std::string();
  std::filesystem::path file = node[field].as<std::string>();
  if (file.is_relative()) file = std::filesystem::path(path).parent_path() / file;
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status(Code::kInvalid, path + ": cannot read " + field + " " + file.string());
  return text.str();
}

// The user entry's credentials: token, client-certificate[-data] and client-key[-data].
Status ReadUser(const YAML::Node& user, const std::string& path,
                client::HttpClientOptions* options) {
  if (!user) return Status::Ok();
  if (user["token"]) options->token = user["token"].as<std::string>();
  ASSIGN_OR_RETURN(options->client_certificate_pem,
                   ReadCredential(user, "client-certificate", path));
  ASSIGN_OR_RETURN(options->client_key_pem, ReadCredential(user, "client-key", path));
  return Status::Ok();
}

// The kubeconfig's server, TLS settings, credentials and namespace for the context (the
// current-context when context is "").
Status ReadKubeconfig(const std::string& path, const std::string& context,
                      client::HttpClientOptions* options, std::string* ns) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status(Code::kInvalid, "kubeconfig " + path + ": no such file");
  }
  try {
    YAML::Node config = YAML::LoadFile(path);
    std::string context_name =
        context.empty() ? config["current-context"].as<std::string>("") : context;
    YAML::Node entry = Named(config["contexts"], context_name, "context");
    if (!entry) {
      return Status(Code::kInvalid, path + ": " + (context.empty() ? "current-context" : "context") +
                                        " \"" + context_name + "\" not found in contexts");
    }
    std::string cluster_name = entry["cluster"].as<std::string>("");
    YAML::Node cluster = Named(config["clusters"], cluster_name, "cluster");
    if (!cluster || !cluster["server"]) {
      return Status(Code::kInvalid, path + ": cluster \"" + cluster_name + "\" has no server");
    }
    options->server = cluster["server"].as<std::string>();
    RETURN_IF_ERROR(ReadClusterTls(cluster, path, options));
    RETURN_IF_ERROR(ReadUser(Named(config["users"], entry["user"].as<std::string>(""), "user"),
                             path, options));
    *ns = entry["namespace"].as<std::string>("");
  } catch (const std::exception& e) {
    return Status(Code::kInvalid, path + ": cannot read kubeconfig: " + e.what());
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultServeKubeconfig() { return Home() + "/.pjemu/kubeconfig"; }

void AddRemoteFlags(CLI::App& command, RemoteFlags* flags, bool with_all_namespaces) {
  command.add_option("--kubeconfig", flags->kubeconfig,
                     "kubeconfig of the server (default: $KUBECONFIG, ~/.kube/config, or the "
                     "one `pjemu serve` wrote in ~/.pjemu/kubeconfig)");
  command.add_option("--context", flags->context,
                     "the kubeconfig context to use (default: its current-context)");
  command.add_option("-s,--server", flags->server, "API server address, e.g. http://127.0.0.1:6443 (https: verified against the "
                     "kubeconfig's certificate authority when one is found)");
  command.add_option("--token", flags->token, "bearer token for the API server");
  command.add_option("--certificate-authority", flags->certificate_authority,
                     "PEM file of the CA that signed the server's certificate (https)");
  command.add_flag("--insecure-skip-tls-verify", flags->insecure_skip_tls_verify,
                   "accept any server certificate (https); insecure");
  command.add_option("-n,--namespace", flags->ns, "namespace (default: the context's, or default)");
  if (with_all_namespaces) {
    command.add_flag("-A,--all-namespaces", flags->all_namespaces, "list across all namespaces");
  }
}

Result<Remote> Connect(const RemoteFlags& flags) {
  client::HttpClientOptions options;
  std::string ns;
  if (!flags.server.empty()) {
    options.server = flags.server;
  } else {
    std::string path = FindKubeconfig(flags.kubeconfig);
    if (path.empty()) {
      return Status(Code::kInvalid,
                    "no server to talk to: pass --server or --kubeconfig, set $KUBECONFIG, or "
                    "start `pjemu serve` (it writes " + DefaultServeKubeconfig() + ")");
    }
    RETURN_IF_ERROR(ReadKubeconfig(path, flags.context, &options, &ns));
  }
  if (!flags.token.empty()) options.token = flags.token;
  if (!flags.certificate_authority.empty()) {
    std::ifstream in(flags.certificate_authority);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      return Status(Code::kInvalid, "cannot read --certificate-authority " + flags.certificate_authority);
    }
    options.ca_pem = text.str();
  }
  if (flags.insecure_skip_tls_verify) options.insecure_skip_tls_verify = true;
  if (!flags.ns.empty()) ns = flags.ns;
  if (ns.empty()) ns = "default";
  return Remote{client::MakeHttpClient(std::move(options)), ns};
}

Result<const api::ResourceType*> ResolveResource(std::string_view word) {
  std::string w(word);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const api::ResourceType& t : api::AllResources()) {
    std::string dotted = t.group.empty() ? "" : "." + t.group;
    if (w == t.plural || w == t.singular || w == t.plural + dotted || w == t.singular + dotted) {
      return &t;
    }
    std::string kind = t.kind;
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (w == kind) return &t;
    for (const std::string& s : t.short_names) {
      if (w == s) return &t;
    }
  }
  return Status(Code::kNotFound,
                "the server doesn't have a resource type \"" + std::string(word) + "\"");
}

Result<std::vector<ObjectRef>> ParseObjectArgs(const std::vector<std::string>& args) {
  std::vector<ObjectRef> refs;
  if (args.empty()) return Status(Code::kBadRequest, "you must specify the resource, e.g. pytorchjob/NAME");
  if (args[0].find('/') != std::string::npos) {
    for (const std::string& a : args) {
      auto slash = a.find('/');
      if (slash == std::string::npos) {
        return Status(Code::kBadRequest, "there is no need to specify a resource type as a "
                                         "separate argument when passing arguments in "
                                         "resource/name form (e.g. 'pjemu get resource/<resource_name>' "
                                         "instead of 'pjemu get resource resource/<resource_name>'");
      }
      ASSIGN_OR_RETURN(const api::ResourceType* t, ResolveResource(a.substr(0, slash)));
      refs.push_back({t, a.substr(slash + 1)});
    }
    return refs;
  }
  ASSIGN_OR_RETURN(const api::ResourceType* t, ResolveResource(args[0]));
  if (args.size() < 2) {
    return Status(Code::kBadRequest, "resource(s) were provided, but no name was specified");
  }
  for (std::size_t i = 1; i < args.size(); ++i) refs.push_back({t, args[i]});
  return refs;
}

std::string KindName(const api::ResourceType& type) {
  return type.group.empty() ? type.singular : type.singular + "." + type.group;
}

std::string ErrorLine(const Status& status) {
  switch (status.code()) {
    case Code::kUnavailable:
    case Code::kBadRequest:
      if (status.message().rfind("the connection", 0) == 0 ||
          status.message().rfind("server ", 0) == 0) {
        return "error: " + status.message();
      }
      break;
    default:
      break;
  }
  return std::string("Error from server (") + ReasonOf(status.code()) + "): " + status.message();
}

}  // namespace pjemu::cli
