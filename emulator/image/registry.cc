#include "emulator/image/registry.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "emulator/common/strings.h"
#include "emulator/image/digest.h"
#include "emulator/image/media_types.h"
#include "emulator/image/registry_session.h"

namespace pjemu::image {
namespace registry_detail {

using namespace media_types;  // NOLINT: the media types the pull tells apart
// containerd's resolver's Accept list (spec §7.3).
constexpr char kAcceptHeader[] =
    "Accept: application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, */*";
constexpr std::int64_t kMaxConfigBytes = 64 << 20;
constexpr int kMaxIndexDepth = 4;

std::string Trim(const std::string& text) {
  const std::size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const std::size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e - b + 1);
}

std::vector<std::string> SplitList(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::string all = text;
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t comma = all.find(',', start);
    if (comma == std::string::npos) comma = all.size();
    std::string item = Trim(all.substr(start, comma - start));
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

// "127.0.0.1:5000" -> "127.0.0.1", "[::1]:5000" -> "::1", "localhost" -> "localhost".
std::string HostOnly(const std::string& domain) {
  if (!domain.empty() && domain.front() == '[') {
    const std::size_t close = domain.find(']');
    return close == std::string::npos ? domain : domain.substr(1, close - 1);
  }
  if (std::count(domain.begin(), domain.end(), ':') == 1) return domain.substr(0, domain.find(':'));
  return domain;
}

bool IsLoopback(const std::string& domain) {
  const std::string host = AsciiLower(HostOnly(domain));
  if (host == "localhost" || host == "::1") return true;
  if (host.rfind("127.", 0) != 0) return false;
  return host.find_first_not_of("0123456789.") == std::string::npos;
}

// An entry of a host list names the domain as written ("127.0.0.1:5000"), its host alone
// ("127.0.0.1"), or (for Docker Hub) the host actually contacted.
bool Listed(const std::vector<std::string>& list, const api::ImageReference& ref) {
  const std::string domain = AsciiLower(ref.domain);
  const std::string host = AsciiLower(HostOnly(ref.domain));
  const std::string contacted = AsciiLower(ref.RegistryHost());
  for (const std::string& entry : list) {
    const std::string e = AsciiLower(Trim(entry));
    if (e == domain || e == host || e == contacted) return true;
  }
  return false;
}

std::string MediaTypeOf(const std::string& content_type) {
  return AsciiLower(Trim(content_type.substr(0, content_type.find(';'))));
}

bool IsIndexType(const std::string& t) { return t == kOciIndex || t == kDockerList; }
bool IsManifestType(const std::string& t) { return t == kOciManifest || t == kDockerManifest; }
bool IsKnownManifestType(const std::string& t) {
  return IsIndexType(t) || IsManifestType(t) || IsSchema1(t);
}

std::string StringField(const Json& object, const char* field) {
  if (!object.is_object()) return "";
  auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::int64_t SizeField(const Json& object) {
  if (!object.is_object()) return -1;
  auto it = object.find("size");
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

// The manifest's kind: its Content-Type when that names one, else its mediaType field, else
// its shape. kInvalid when the two disagree (containerd's validateMediaType).
Result<std::string> ManifestKind(const Json& doc, const std::string& content_type) {
  const std::string ct = MediaTypeOf(content_type);
  const std::string field = StringField(doc, "mediaType");
  if (!field.empty() && IsKnownManifestType(ct) && field != ct) {
    return Status(Code::kInvalid,
                  fmt::format("mediaType in manifest should be '{}' not '{}'", ct, field));
  }
  if (IsKnownManifestType(ct)) return ct;
  if (!field.empty()) return field;
  if (doc.is_object()) {
    if (auto v = doc.find("schemaVersion"); v != doc.end() && *v == 1) {
      return std::string(kSchema1Signed);
    }
    if (doc.contains("manifests")) return std::string(kOciIndex);
    if (doc.contains("layers") || doc.contains("config")) return std::string(kOciManifest);
  }
  return Status(Code::kInvalid, fmt::format("unsupported manifest media type \"{}\"", ct));
}

bool IsLayerType(const std::string& t) {
  return t.find("+encrypted") == std::string::npos &&
         (t.rfind("application/vnd.oci.image.layer.", 0) == 0 ||
          t.rfind("application/vnd.docker.image.rootfs.", 0) == 0);
}

// A temp file removed when the download is done with it, whatever happens.
struct TempFileGuard {
  std::string path;
  int fd = -1;
  ~TempFileGuard() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace registry_detail

namespace regd = registry_detail;

RegistryOptions RegistryOptions::FromEnvironment() {
  RegistryOptions options;
  options.allowed_registries = regd::SplitList(std::getenv("PJEMU_ALLOW_REGISTRIES"));
  options.insecure_registries = regd::SplitList(std::getenv("PJEMU_INSECURE_REGISTRIES"));
  return options;
}

namespace registry_detail {

Status ClientState::CheckAllowed(const api::ImageReference& ref) const {
  if (options.allowed_registries.empty() || Listed(options.allowed_registries, ref)) {
    return Status::Ok();
  }
  const std::string allowed = Join(options.allowed_registries, ",");
  return Status(Code::kForbidden,
                fmt::format("registry \"{}\" is not allowed (PJEMU_ALLOW_REGISTRIES={})",
                            ref.domain, allowed));
}

PullSession::PullSession(ClientState& impl, const api::ImageReference& ref,
                         std::vector<Credential> credentials)
    : impl_(impl),
      ref_(ref),
      credentials_(std::move(credentials)),
      fetcher_(http::FetchOptions{impl.options.connect_timeout_ms, impl.options.low_speed_seconds,
                                  impl.options.ca_file}),
      host_(ref.RegistryHost()),
      scope_("repository:" + ref.path + ":pull") {
  const bool plain = IsLoopback(ref.domain) || Listed(impl.options.insecure_registries, ref);
  base_ = fmt::format("{}://{}/v2/{}", plain ? "http" : "https", host_, ref.path);
}

Result<PullSession::Resolved> PullSession::Resolve() {
  const std::string reference = ref_.digest.empty() ? ref_.tag : ref_.digest;
  const std::string url = base_ + "/manifests/" + reference;
  http::Request head;
  head.method = "HEAD";
  head.url = url;
  head.headers = {kAcceptHeader};
  auto sent = Send(head);
  if (!sent.ok()) return ResolveError(sent.status());
  http::Response resp = std::move(sent).value();
  if (resp.status == 404) return ResolveError(NotFound());
  if (resp.status >= 200 && resp.status < 300 && !resp.docker_content_digest.empty()) {
    if (!ref_.digest.empty() && resp.docker_content_digest != ref_.digest) {
      return ResolveError(
          Status(Code::kInvalid, fmt::format("digest mismatch: expected {}, got {}", ref_.digest,
                                             resp.docker_content_digest)));
    }
    RETURN_IF_ERROR(ResolveError(CheckDigest(resp.docker_content_digest)));
    return Resolved{resp.docker_content_digest, "", resp.content_type};
  }
  if (resp.status == 401 || resp.status == 403) {
    return ResolveError(StatusError("HEAD", url, resp));
  }
  // No digest from HEAD (old registries, HEAD refused), or an error whose body HEAD cannot
  // carry (429's message): GET, and hash what comes, as containerd does.
  http::Request get;
  get.url = url;
  get.headers = {kAcceptHeader};
  get.max_body = impl_.options.max_manifest_bytes;
  auto got = Send(get);
  if (!got.ok()) return ResolveError(got.status());
  http::Response body = std::move(got).value();
  if (body.status == 404) return ResolveError(NotFound());
  if (body.status < 200 || body.status >= 300) {
    return ResolveError(StatusError("GET", url, body));
  }
  std::string digest = Sha256Of(body.body);
  if (!ref_.digest.empty() && digest != ref_.digest) {
    return ResolveError(Status(
        Code::kInvalid, fmt::format("digest mismatch: expected {}, got {}", ref_.digest, digest)));
  }
  return Resolved{std::move(digest), std::move(body.body), body.content_type};
}

Result<ImageRecord> PullSession::Pull(PullStats* stats) {
  ASSIGN_OR_RETURN(Resolved top, Resolve());
  std::string digest = top.digest;
  std::string bytes = std::move(top.bytes);
  std::string content_type = top.content_type;
  if (bytes.empty()) {
    ASSIGN_OR_RETURN(bytes, FetchManifest(digest, &content_type));
  }
  std::vector<std::pair<std::string, std::string>> blobs;  // digest, bytes: indexes, manifest
  Json manifest;
  for (int depth = 0;; ++depth) {
    Json doc = Json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
      return Status(Code::kInvalid, fmt::format("manifest {}: invalid JSON", digest));
    }
    ASSIGN_OR_RETURN(std::string kind, ManifestKind(doc, content_type));
    blobs.emplace_back(digest, std::move(bytes));
    if (IsSchema1(kind)) {
      return Status(Code::kInvalid,
                    fmt::format("not implemented: media type \"{}\" is no longer supported "
                                "since containerd v2.1, please rebuild the image as \"{}\" or "
                                "\"{}\"",
                                kSchema1Signed, kDockerManifest, kOciManifest));
    }
    if (IsManifestType(kind)) {
      manifest = std::move(doc);
      break;
    }
    if (!IsIndexType(kind)) {
      return Status(Code::kInvalid, fmt::format("unsupported manifest media type \"{}\"", kind));
    }
    if (depth >= kMaxIndexDepth) {
      return Status(Code::kInvalid,
                    fmt::format("index {}: nested more than {} deep", digest, kMaxIndexDepth));
    }
    ASSIGN_OR_RETURN(Json chosen, SelectManifest(doc, impl_.options.platform));
    digest = StringField(chosen, "digest");
    RETURN_IF_ERROR(CheckDigest(digest));
    ASSIGN_OR_RETURN(bytes, FetchManifest(digest, &content_type));
  }
  const std::string manifest_digest = blobs.back().first;

  // The config: verified, stored, its DiffIDs paired with the manifest's layers.
  const Json config_desc = manifest.value("config", Json::object());
  const std::string config_type = StringField(config_desc, "mediaType");
  if (config_type != kOciConfig && config_type != kDockerConfig) {
    return Status(Code::kInvalid, fmt::format("manifest {}: unsupported config media type \"{}\"",
                                              manifest_digest, config_type));
  }
  ASSIGN_OR_RETURN(std::string config_bytes, FetchSmallBlob(config_desc, kMaxConfigBytes));
  const std::string config_digest = StringField(config_desc, "digest");
  Json config = Json::parse(config_bytes, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) {
    return Status(Code::kInvalid, fmt::format("config {}: invalid JSON", config_digest));
  }
  std::vector<std::string> diff_ids;
  if (auto rootfs = config.find("rootfs"); rootfs != config.end() && rootfs->is_object()) {
    if (auto ids = rootfs->find("diff_ids"); ids != rootfs->end() && ids->is_array()) {
      for (const Json& id : *ids) diff_ids.push_back(id.is_string() ? id.get<std::string>() : "");
    }
  }
  const Json layers = manifest.value("layers", Json::array());
  if (!layers.is_array() || layers.size() != diff_ids.size()) {
    return Status(Code::kInvalid,
                  fmt::format("invalid manifest, layers length mismatch: expected {}, got {}",
                              diff_ids.size(), layers.is_array() ? layers.size() : 0));
  }
  RETURN_IF_ERROR(impl_.store->PutBlob(config_digest, config_bytes));
  for (const auto& [d, b] : blobs) RETURN_IF_ERROR(impl_.store->PutBlob(d, b));

  std::int64_t size = static_cast<std::int64_t>(config_bytes.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Json& desc = layers[i];
    const std::string type = StringField(desc, "mediaType");
    if (!IsLayerType(type)) {
      return Status(Code::kInvalid, fmt::format("layer {}: unsupported media type \"{}\"",
                                                StringField(desc, "digest"), type));
    }
    RETURN_IF_ERROR(CheckDigest(diff_ids[i]));
    size += std::max<std::int64_t>(SizeField(desc), 0);
    if (impl_.store->HasLayer(diff_ids[i])) continue;
    RETURN_IF_ERROR(FetchLayer(desc, diff_ids[i], stats));
  }

  ImageRecord record;
  record.id = config_digest;
  record.names = {ref_.String()};
  record.repo_digests = {ref_.WithDigest(blobs.front().first)};
  record.manifest_digest = manifest_digest;
  record.config = std::move(config);
  record.diff_ids = std::move(diff_ids);
  record.size = size;
  record.source = "pull";
  RETURN_IF_ERROR(impl_.store->Commit(record));
  if (std::optional<ImageRecord> stored = impl_.store->Find(ref_.String())) return *stored;
  return record;
}

// The manifest `digest` names, its bytes verified.
Result<std::string> PullSession::FetchManifest(const std::string& digest,
                                               std::string* content_type) {
  http::Request get;
  get.url = base_ + "/manifests/" + digest;
  get.headers = {kAcceptHeader};
  get.max_body = impl_.options.max_manifest_bytes;
  ASSIGN_OR_RETURN(http::Response resp, Send(get));
  if (resp.status < 200 || resp.status >= 300) return BlobError("GET", get.url, resp);
  const std::string got = Sha256Of(resp.body);
  if (got != digest) {
    return Status(Code::kInvalid, fmt::format("digest mismatch: expected {}, got {}", digest, got));
  }
  *content_type = resp.content_type;
  return std::move(resp.body);
}

// A config blob into memory, its size and digest verified.
Result<std::string> PullSession::FetchSmallBlob(const Json& desc, std::int64_t cap) {
  const std::string digest = StringField(desc, "digest");
  RETURN_IF_ERROR(CheckDigest(digest));
  const std::int64_t size = SizeField(desc);
  if (size > cap) {
    return Status(Code::kInvalid,
                  fmt::format("blob {}: size {} over the limit of {} bytes", digest, size, cap));
  }
  http::Request get;
  get.url = base_ + "/blobs/" + digest;
  get.max_body = size >= 0 ? size : cap;
  ASSIGN_OR_RETURN(http::Response resp, Send(get));
  if (resp.status < 200 || resp.status >= 300) return BlobError("GET", get.url, resp);
  if (size >= 0 && static_cast<std::int64_t>(resp.body.size()) != size) {
    return Status(Code::kInvalid, fmt::format("blob {}: failed size validation: {} != {}", digest,
                                              resp.body.size(), size));
  }
  const std::string got = Sha256Of(resp.body);
  if (got != digest) {
    return Status(Code::kInvalid, fmt::format("digest mismatch: expected {}, got {}", digest, got));
  }
  return std::move(resp.body);
}

// A layer blob into the store's tmp/, hashed as it arrives, then handed to AddLayer.
Status PullSession::FetchLayer(const Json& desc, const std::string& diff_id, PullStats* stats) {
  const std::string digest = StringField(desc, "digest");
  RETURN_IF_ERROR(CheckDigest(digest));
  const std::int64_t size = SizeField(desc);
  if (size < 0) return Status(Code::kInvalid, fmt::format("layer {}: no size", digest));
  TempFileGuard file;
  file.path = impl_.store->TempPath(DigestHex(digest));
  file.fd = ::open(file.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (file.fd < 0) {
    const int err = errno;
    Status failed = InternalError(fmt::format("open {}: {}", file.path, std::strerror(err)));
    file.path.clear();
    return failed;
  }
  Sha256 hash;
  std::int64_t received = 0;
  http::Request get;
  get.url = base_ + "/blobs/" + digest;
  get.sink = [&](std::string_view chunk) -> Status {
    received += static_cast<std::int64_t>(chunk.size());
    if (received > size) {
      return Status(Code::kInvalid, fmt::format("layer {}: more than the {} bytes the "
                                                "manifest gives",
                                                digest, size));
    }
    hash.Update(chunk.data(), chunk.size());
    std::size_t done = 0;
    while (done < chunk.size()) {
      const ssize_t w = ::write(file.fd, chunk.data() + done, chunk.size() - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        return InternalError(fmt::format("write {}: {}", file.path, std::strerror(errno)));
      }
      done += static_cast<std::size_t>(w);
    }
    return Status::Ok();
  };
  ASSIGN_OR_RETURN(http::Response resp, Send(get));
  if (resp.status < 200 || resp.status >= 300) return BlobError("GET", get.url, resp);
  if (received != size) {
    return Status(Code::kInvalid, fmt::format("layer {}: failed size validation: {} != {}", digest,
                                              received, size));
  }
  const std::string got = hash.Final();
  if (got != digest) {
    return Status(Code::kInvalid, fmt::format("digest mismatch: expected {}, got {}", digest, got));
  }
  if (::close(file.fd) != 0) {
    file.fd = -1;
    return InternalError(fmt::format("close {}: {}", file.path, std::strerror(errno)));
  }
  file.fd = -1;
  RETURN_IF_ERROR(impl_.store->AddLayer(file.path, LayerExpect{digest, size, diff_id}).status());
  if (stats) {
    stats->bytes_fetched += received;
    stats->layers_fetched += 1;
  }
  return Status::Ok();
}

}  // namespace registry_detail

struct RegistryClient::Impl : regd::ClientState {};

RegistryClient::RegistryClient(std::shared_ptr<ImageStore> store, RegistryOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->store = std::move(store);
  impl_->options = std::move(options);
}

RegistryClient::~RegistryClient() = default;

const RegistryOptions& RegistryClient::options() const { return impl_->options; }

Result<std::string> RegistryClient::Resolve(const api::ImageReference& ref,
                                            const Keyring& keyring) {
  RETURN_IF_ERROR(impl_->CheckAllowed(ref));
  try {
    regd::PullSession session(*impl_, ref, keyring.Lookup(ref));
    ASSIGN_OR_RETURN(regd::PullSession::Resolved resolved, session.Resolve());
    return resolved.digest;
  } catch (const std::exception& e) {
    return InternalError(fmt::format("resolve {}: {}", ref.String(), e.what()));
  }
}

Result<ImageRecord> RegistryClient::Pull(const api::ImageReference& ref, const Keyring& keyring,
                                         PullStats* stats) {
  if (stats) *stats = PullStats{};
  RETURN_IF_ERROR(impl_->CheckAllowed(ref));
  const std::string key = ref.String();
  std::promise<Result<ImageRecord>> promise;
  std::shared_future<Result<ImageRecord>> leader_result;
  bool leader = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->in_flight.find(key);
    if (it != impl_->in_flight.end()) {
      leader_result = it->second;
    } else {
      impl_->in_flight.emplace(key, promise.get_future().share());
      leader = true;
    }
  }
  // A later caller waits for the first one's pull (and fetches nothing itself).
  if (!leader) return leader_result.get();
  Result<ImageRecord> result = Status(Code::kInternal, "pull did not run");
  try {
    regd::PullSession session(*impl_, ref, keyring.Lookup(ref));
    result = session.Pull(stats);
  } catch (const std::exception& e) {
    result = InternalError(fmt::format("pull {}: {}", key, e.what()));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->in_flight.erase(key);
  }
  promise.set_value(result);
  return result;
}

}  // namespace pjemu::image
