// LoadArchive: an archive (or an OCI layout directory) is a set of members found by name
// (archive_source.h); this file reads its OCI layout (index.json, manifests, configs) or its
// docker-save manifest.json, and adds each image's layers, config and record to the store.
#include "emulator/image/archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>

#include "emulator/api/image_reference.h"
#include "emulator/image/archive_source.h"
#include "emulator/image/digest.h"
#include "emulator/image/fs_util.h"
#include "emulator/image/media_types.h"

namespace pjemu::image {

namespace archive_detail {

constexpr std::int64_t kMaxJson = 64 << 20;  // a manifest, index or config
using namespace media_types;  // NOLINT: the media types this reader tells apart

std::string StringField(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<Json> ParseJson(const std::string& bytes, const std::string& what) {
  Json j = Json::parse(bytes, nullptr, false);
  if (j.is_discarded()) return Invalid("invalid " + what + ": not JSON");
  return j;
}

// A name from an OCI index entry's annotations, normalized; "" when it has none usable.
std::string OciName(const Json& descriptor) {
  auto annotations = descriptor.find("annotations");
  if (annotations == descriptor.end() || !annotations->is_object()) return "";
  std::string name = StringField(*annotations, "io.containerd.image.name");
  if (!name.empty()) {
    auto ref = api::ParseImageReference(name);
    return ref.ok() ? ref->String() : "";
  }
  name = StringField(*annotations, "org.opencontainers.image.ref.name");
  // Only a full reference (with its registry host): a bare tag ("latest") names nothing.
  std::size_t slash = name.find('/');
  if (slash == std::string::npos) return "";
  std::string host = name.substr(0, slash);
  if (host.find('.') == std::string::npos && host.find(':') == std::string::npos &&
      host != "localhost") {
    return "";
  }
  auto ref = api::ParseImageReference(name);
  return ref.ok() ? ref->String() : "";
}

bool IsAttestation(const Json& descriptor) {
  auto platform = descriptor.find("platform");
  if (platform != descriptor.end() && platform->is_object() &&
      (StringField(*platform, "os") == "unknown" ||
       StringField(*platform, "architecture") == "unknown")) {
    return true;
  }
  auto annotations = descriptor.find("annotations");
  return annotations != descriptor.end() && annotations->is_object() &&
         StringField(*annotations, "vnd.docker.reference.type") == "attestation-manifest";
}

class Loader {
 public:
  Loader(ImageStore& store, Source& source, std::string path, const Platform& platform)
      : store_(store), source_(source), path_(std::move(path)), platform_(platform) {}

  Result<std::vector<LoadedImage>> Load() {
    if (!source_.Resolve("oci-layout").empty()) {
      RETURN_IF_ERROR(LoadOci());
      if (!source_.Resolve("manifest.json").empty()) RETURN_IF_ERROR(NamesFromDockerManifest());
    } else if (!source_.Resolve("manifest.json").empty()) {
      RETURN_IF_ERROR(LoadDocker());
    } else if (!source_.Resolve("repositories").empty()) {
      return Invalid("invalid archive: does not contain a manifest.json");
    } else {
      return Invalid("unrecognized image format");
    }
    std::vector<LoadedImage> out;
    for (const auto& id : order_) {
      ImageRecord& record = records_[id];
      record.source = "load " + path_;
      RETURN_IF_ERROR(store_.Commit(record));
      out.push_back(LoadedImage{record.id, record.names});
    }
    return out;
  }

 private:
  Result<std::string> ReadMember(const std::string& name, const std::string& what) {
    std::string resolved = source_.Resolve(name);
    if (resolved.empty()) return Invalid(what + " " + name + " is not in the archive");
    return source_.Read(resolved, kMaxJson);
  }

  // A blob of the OCI layout, verified against its descriptor.
  Result<std::string> ReadBlob(const Json& descriptor) {
    std::string digest = StringField(descriptor, "digest");
    RETURN_IF_ERROR(CheckDigest(digest));
    ASSIGN_OR_RETURN(std::string bytes, ReadMember("blobs/sha256/" + DigestHex(digest), "blob"));
    std::string actual = Sha256Of(bytes);
    if (actual != digest) {
      return Invalid("blob " + digest + ": digest mismatch: expected " + digest + ", got " +
                     actual);
    }
    auto size = descriptor.find("size");
    if (size != descriptor.end() && size->is_number_integer() &&
        size->get<std::int64_t>() != static_cast<std::int64_t>(bytes.size())) {
      return Invalid("blob " + digest + ": size mismatch: expected " +
                     std::to_string(size->get<std::int64_t>()) + ", got " +
                     std::to_string(bytes.size()));
    }
    return bytes;
  }

  Status LoadOci() {
    ASSIGN_OR_RETURN(std::string layout_bytes, ReadMember("oci-layout", "file"));
    ASSIGN_OR_RETURN(Json layout, ParseJson(layout_bytes, "oci-layout"));
    std::string version = StringField(layout, "imageLayoutVersion");
    if (version != "1.0.0") return Invalid("unsupported OCI version " + version);
    if (source_.Resolve("index.json").empty()) {
      return Invalid("missing index.json in OCI layout " + path_);
    }
    ASSIGN_OR_RETURN(std::string index_bytes, ReadMember("index.json", "file"));
    ASSIGN_OR_RETURN(Json index, ParseJson(index_bytes, "index.json"));
    auto manifests = index.find("manifests");
    if (manifests == index.end() || !manifests->is_array()) return Status::Ok();
    // Entries of one name (or all unnamed ones) that carry platforms are one multi-platform
    // image: the node's platform is selected among them.
    std::map<std::string, std::vector<Json>> groups;
    std::vector<std::string> group_order;
    for (const Json& descriptor : *manifests) {
      if (!descriptor.is_object() || IsAttestation(descriptor)) continue;
      std::string name = OciName(descriptor);
      if (!groups.count(name)) group_order.push_back(name);
      groups[name].push_back(descriptor);
    }
    for (const std::string& name : group_order) {
      std::vector<Json> with_platform;
      for (const Json& descriptor : groups[name]) {
        if (descriptor.contains("platform")) {
          with_platform.push_back(descriptor);
        } else {
          RETURN_IF_ERROR(LoadOciEntry(descriptor, name));
        }
      }
      if (with_platform.size() == 1) {
        RETURN_IF_ERROR(LoadOciEntry(with_platform[0], name));
      } else if (!with_platform.empty()) {
        ASSIGN_OR_RETURN(Json chosen,
                         SelectManifest(Json{{"manifests", with_platform}}, platform_));
        RETURN_IF_ERROR(LoadOciEntry(chosen, name));
      }
    }
    return Status::Ok();
  }

  // One named descriptor of index.json: an index resolved to the platform, or a manifest.
  Status LoadOciEntry(const Json& top, const std::string& name) {
    Json descriptor = top;
    for (int depth = 0; depth < 8; ++depth) {
      std::string media_type = StringField(descriptor, "mediaType");
      if (IsSchema1(media_type)) {
        return Invalid("schema 1 manifests are no longer supported");
      }
      if (!media_type.empty() && media_type != kOciIndex && media_type != kDockerList &&
          media_type != kOciManifest && media_type != kDockerManifest) {
        return Status::Ok();  // an unknown media type is skipped, not an error
      }
      ASSIGN_OR_RETURN(std::string bytes, ReadBlob(descriptor));
      ASSIGN_OR_RETURN(Json blob,
                       ParseJson(bytes, "manifest " + StringField(descriptor, "digest")));
      std::string blob_type = StringField(blob, "mediaType");
      bool is_index = media_type == kOciIndex || media_type == kDockerList ||
                      (media_type.empty() && (blob_type == kOciIndex || blob_type == kDockerList ||
                                              blob.contains("manifests")));
      RETURN_IF_ERROR(store_.PutBlob(StringField(descriptor, "digest"), bytes));
      if (!is_index) {
        return LoadOciManifest(blob, StringField(descriptor, "digest"), StringField(top, "digest"),
                               name);
      }
      ASSIGN_OR_RETURN(descriptor, SelectManifest(blob, platform_));
    }
    return Invalid("image index nested too deeply");
  }

  Status LoadOciManifest(const Json& manifest, const std::string& manifest_digest,
                         const std::string& top_digest, const std::string& name) {
    auto config_it = manifest.find("config");
    if (config_it == manifest.end() || !config_it->is_object()) {
      return Invalid("invalid manifest " + manifest_digest + ": no config");
    }
    ASSIGN_OR_RETURN(std::string config_bytes, ReadBlob(*config_it));
    std::string id = StringField(*config_it, "digest");
    std::vector<Json> layers;
    if (auto it = manifest.find("layers"); it != manifest.end() && it->is_array()) {
      layers.assign(it->begin(), it->end());
    }
    std::vector<LayerSpec> specs;
    for (const Json& layer : layers) {
      LayerSpec spec;
      spec.expect.blob_digest = StringField(layer, "digest");
      RETURN_IF_ERROR(CheckDigest(spec.expect.blob_digest));
      if (auto size = layer.find("size"); size != layer.end() && size->is_number_integer()) {
        spec.expect.blob_size = size->get<std::int64_t>();
      }
      spec.member = "blobs/sha256/" + DigestHex(spec.expect.blob_digest);
      spec.check_diff_id = false;
      specs.push_back(spec);
    }
    RETURN_IF_ERROR(AddImage(id, config_bytes, specs, manifest_digest, name, top_digest));
    return Status::Ok();
  }

  Status LoadDocker() {
    ASSIGN_OR_RETURN(std::string bytes, ReadMember("manifest.json", "file"));
    ASSIGN_OR_RETURN(Json manifest, ParseJson(bytes, "manifest.json"));
    if (!manifest.is_array()) return Invalid("invalid manifest.json: not a list");
    for (const Json& entry : manifest) {
      std::string config_name = StringField(entry, "Config");
      ASSIGN_OR_RETURN(std::string config_bytes, ReadMember(config_name, "config"));
      std::string id = Sha256Of(config_bytes);
      std::string base = config_name.substr(config_name.rfind('/') + 1);
      if (base.size() > 5 && base.substr(base.size() - 5) == ".json") {
        base = base.substr(0, base.size() - 5);
      }
      if (base.size() == 64 && CheckDigest("sha256:" + base).ok() && id != "sha256:" + base) {
        return Invalid("config " + config_name + ": digest mismatch: expected sha256:" + base +
                       ", got " + id);
      }
      std::vector<LayerSpec> specs;
      if (auto it = entry.find("Layers"); it != entry.end() && it->is_array()) {
        for (const Json& layer : *it) {
          if (!layer.is_string()) return Invalid("invalid manifest.json: a layer is not a path");
          LayerSpec spec;
          spec.member = layer.get<std::string>();
          spec.check_diff_id = true;
          specs.push_back(spec);
        }
      }
      std::vector<std::string> names;
      if (auto it = entry.find("RepoTags"); it != entry.end() && it->is_array()) {
        for (const Json& tag : *it) {
          if (!tag.is_string()) continue;
          auto ref = api::ParseImageReference(tag.get<std::string>());
          if (!ref.ok()) {
            return Invalid("invalid tag \"" + tag.get<std::string>() +
                           "\": " + ref.status().message());
          }
          names.push_back(ref->String());
        }
      }
      RETURN_IF_ERROR(AddImage(id, config_bytes, specs, "", "", ""));
      for (const auto& n : names) AddName(id, n, "");
    }
    return Status::Ok();
  }

  // Docker >= 25 archives: manifest.json's RepoTags name the OCI images too.
  Status NamesFromDockerManifest() {
    ASSIGN_OR_RETURN(std::string bytes, ReadMember("manifest.json", "file"));
    Json manifest = Json::parse(bytes, nullptr, false);
    if (!manifest.is_array()) return Status::Ok();
    for (const Json& entry : manifest) {
      std::string config = StringField(entry, "Config");
      std::string id = "sha256:" + config.substr(config.rfind('/') + 1);
      if (!records_.count(id)) continue;
      if (auto it = entry.find("RepoTags"); it != entry.end() && it->is_array()) {
        for (const Json& tag : *it) {
          if (!tag.is_string()) continue;
          auto ref = api::ParseImageReference(tag.get<std::string>());
          if (ref.ok()) AddName(id, ref->String(), "");
        }
      }
    }
    return Status::Ok();
  }

  struct LayerSpec {
    std::string member;
    LayerExpect expect;
    bool check_diff_id = false;  // docker-save: learn the DiffID, compare with the config's
  };

  Status AddImage(const std::string& id, const std::string& config_bytes,
                  std::vector<LayerSpec> specs, const std::string& manifest_digest,
                  const std::string& name, const std::string& top_digest) {
    ASSIGN_OR_RETURN(Json config, ParseJson(config_bytes, "image config " + id));
    std::vector<std::string> diff_ids;
    if (config.is_object() && config.contains("rootfs") && config["rootfs"].is_object()) {
      const Json& rootfs = config["rootfs"];
      if (auto it = rootfs.find("diff_ids"); it != rootfs.end() && it->is_array()) {
        for (const Json& d : *it) diff_ids.push_back(d.is_string() ? d.get<std::string>() : "");
      }
    }
    if (specs.size() != diff_ids.size()) {
      return Invalid("invalid manifest, layers length mismatch: expected " +
                     std::to_string(specs.size()) + ", got " + std::to_string(diff_ids.size()));
    }
    for (const auto& d : diff_ids) RETURN_IF_ERROR(CheckDigest(d));
    if (!records_.count(id)) {
      // Layers not in the store yet come out of the archive in one pass.
      std::vector<std::string> needed;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        if (store_.HasLayer(diff_ids[i])) continue;
        std::string resolved = source_.Resolve(specs[i].member);
        if (resolved.empty()) {
          return Invalid("layer " + std::to_string(i) + " (" + specs[i].member +
                         ") is not in the archive");
        }
        specs[i].member = resolved;
        needed.push_back(resolved);
      }
      RETURN_IF_ERROR(source_.Prepare(needed));
      std::int64_t size = static_cast<std::int64_t>(config_bytes.size());
      for (std::size_t i = 0; i < specs.size(); ++i) {
        LayerSpec& spec = specs[i];
        if (!spec.check_diff_id) spec.expect.diff_id = diff_ids[i];
        UnpackedLayer layer;
        if (store_.HasLayer(diff_ids[i])) {
          LayerExpect present = spec.expect;
          present.diff_id = diff_ids[i];
          ASSIGN_OR_RETURN(layer, store_.AddLayer("", present));
        } else {
          bool temporary = false;
          ASSIGN_OR_RETURN(std::string file, source_.FileFor(spec.member, &temporary));
          Result<UnpackedLayer> added = store_.AddLayer(file, spec.expect);
          if (temporary) ::unlink(file.c_str());
          if (!added.ok()) return added.status();
          layer = *added;
          if (spec.check_diff_id && layer.diff_id != diff_ids[i]) {
            return Invalid("invalid diffID for layer " + std::to_string(i) + ": expected \"" +
                           diff_ids[i] + "\", got \"" + layer.diff_id + "\"");
          }
        }
        size += layer.blob_size;
      }
      RETURN_IF_ERROR(store_.PutBlob(id, config_bytes));
      ImageRecord record;
      record.id = id;
      record.manifest_digest = manifest_digest;
      record.config = std::move(config);
      record.diff_ids = diff_ids;
      record.size = size;
      records_[id] = std::move(record);
      order_.push_back(id);
    }
    if (!name.empty()) AddName(id, name, top_digest);
    return Status::Ok();
  }

  void AddName(const std::string& id, const std::string& name, const std::string& digest) {
    ImageRecord& record = records_[id];
    auto add = [](std::vector<std::string>& list, const std::string& value) {
      if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
    };
    add(record.names, name);
    if (!digest.empty()) {
      auto ref = api::ParseImageReference(name);
      if (ref.ok()) add(record.repo_digests, ref->WithDigest(digest));
    }
  }

  ImageStore& store_;
  Source& source_;
  std::string path_;
  Platform platform_;
  std::map<std::string, ImageRecord> records_;
  std::vector<std::string> order_;
};

}  // namespace archive_detail

Result<std::vector<LoadedImage>> LoadArchive(ImageStore& store, const std::string& path,
                                             const Platform& platform) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int error = errno;
    if (error == ENOENT)
      return Status(Code::kNotFound, "open " + path + ": no such file or directory");
    return fsutil::ErrnoStatus("open", path, error);
  }
  if (S_ISDIR(st.st_mode)) {
    std::unique_ptr<archive_detail::Source> source = archive_detail::DirectorySource(path);
    return archive_detail::Loader(store, *source, path, platform).Load();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<archive_detail::Source> source,
                   archive_detail::IndexTar(path, store));
  return archive_detail::Loader(store, *source, path, platform).Load();
}

}  // namespace pjemu::image
