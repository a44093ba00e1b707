// ImageStore: files under root, renamed into place; flock(2) for the index and per layer;
// an in-process map of layers being unpacked so that threads wait for one unpack. Prune and
// the pins that keep fresh layers from it: store_prune.cc.
#include "emulator/image/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <tuple>

#include "emulator/api/image_reference.h"
#include "emulator/image/store_impl.h"

namespace pjemu::image {

namespace store_detail {

using fsutil::UniqueFd;

std::int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
std::int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool IsHex(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<FileLock> FileLock::Acquire(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) return fsutil::ErrnoStatus("open", path, errno);
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return fsutil::ErrnoStatus("flock", path, errno);
  }
  FileLock lock;
  lock.fd_ = std::move(fd);
  return lock;
}

Json ToJson(const ImageRecord& r, std::int64_t last_used_ns) {
  return Json{{"id", r.id},
              {"names", r.names},
              {"repo_digests", r.repo_digests},
              {"manifest_digest", r.manifest_digest},
              {"config", r.config},
              {"diff_ids", r.diff_ids},
              {"size", r.size},
              {"source", r.source},
              {"created_unix", r.created_unix},
              {"last_used_unix", r.last_used_unix},
              {"last_used_ns", last_used_ns}};
}

std::optional<StoredRecord> FromJson(const Json& j) {
  try {
    StoredRecord s;
    ImageRecord& r = s.record;
    r.id = j.at("id").get<std::string>();
    r.names = j.value("names", std::vector<std::string>{});
    r.repo_digests = j.value("repo_digests", std::vector<std::string>{});
    r.manifest_digest = j.value("manifest_digest", "");
    r.config = j.value("config", Json::object());
    r.diff_ids = j.value("diff_ids", std::vector<std::string>{});
    r.size = j.value("size", std::int64_t{0});
    r.source = j.value("source", "");
    r.created_unix = j.value("created_unix", std::int64_t{0});
    r.last_used_unix = j.value("last_used_unix", std::int64_t{0});
    s.last_used_ns = j.value("last_used_ns", r.last_used_unix * 1000000000);
    if (!CheckDigest(r.id).ok()) return std::nullopt;
    return s;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The normalized form of a name ("busybox" -> "docker.io/library/busybox:latest"), or "".
std::string Normalize(const std::string& ref) {
  auto parsed = api::ParseImageReference(ref);
  return parsed.ok() ? parsed->String() : "";
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The earlier record of an image, merged into its new one: names and repo digests kept (the
// new ones added), its creation time, its manifest when the new record names none.
void MergeEarlier(const ImageRecord& earlier, ImageRecord* r) {
  std::vector<std::string> names = earlier.names;
  for (const auto& n : r->names) {
    if (!Contains(names, n)) names.push_back(n);
  }
  r->names = std::move(names);
  std::vector<std::string> digests = earlier.repo_digests;
  for (const auto& d : r->repo_digests) {
    if (!Contains(digests, d)) digests.push_back(d);
  }
  r->repo_digests = std::move(digests);
  if (r->manifest_digest.empty()) r->manifest_digest = earlier.manifest_digest;
  r->created_unix = earlier.created_unix;
}

}  // namespace store_detail

// --- ImageStore::Impl: layers and the index -------------------------------------------

ImageStore::Impl::UnpackTurn::UnpackTurn(Impl& impl, std::string hex)
    : impl_(impl), hex_(std::move(hex)) {
  std::unique_lock<std::mutex> lock(impl_.mu);
  impl_.cv.wait(lock, [&] { return impl_.unpacking.count(hex_) == 0; });
  impl_.unpacking.insert(hex_);
}

ImageStore::Impl::UnpackTurn::~UnpackTurn() {
  {
    std::lock_guard<std::mutex> lock(impl_.mu);
    impl_.unpacking.erase(hex_);
  }
  impl_.cv.notify_all();
}

std::string ImageStore::Impl::TempPath(const std::string& hint) const {
  std::string clean;
  for (char c : hint.substr(0, 40)) {
    clean.push_back((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c
                                                                                          : '_');
  }
  if (clean.empty() || clean[0] == '.') clean = "t" + clean;
  return Tmp() + "/" + fsutil::UniqueName(clean);
}

bool ImageStore::Impl::LayerPresent(const std::string& diff_id) const {
  struct stat st {};
  return ::lstat(LayerDir(diff_id).c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         store_detail::Exists(LayerMeta(diff_id));
}

std::optional<UnpackedLayer> ImageStore::Impl::ReadLayerMeta(const std::string& diff_id) const {
  auto bytes = fsutil::ReadWholeFile(LayerMeta(diff_id), 1 << 20);
  if (!bytes.ok()) return std::nullopt;
  try {
    Json j = Json::parse(*bytes);
    UnpackedLayer layer;
    layer.diff_id = j.value("diff_id", diff_id);
    layer.blob_digest = j.value("blob_digest", "");
    layer.blob_size = j.value("blob_size", std::int64_t{0});
    layer.unpacked_bytes = j.value("unpacked_bytes", std::int64_t{0});
    layer.entries = j.value("entries", std::int64_t{0});
    return layer;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<UnpackedLayer> ImageStore::Impl::PresentLayer(const std::string& diff_id,
                                                            const LayerExpect& expect) {
  if (!LayerPresent(diff_id)) return std::nullopt;
  std::optional<UnpackedLayer> meta = ReadLayerMeta(diff_id);
  if (!meta) return std::nullopt;
  if (!expect.blob_digest.empty()) meta->blob_digest = expect.blob_digest;
  if (expect.blob_size >= 0) meta->blob_size = expect.blob_size;
  Pin(DigestHex(diff_id));
  return meta;
}

Result<UnpackedLayer> ImageStore::Impl::InstallLayer(const std::string& blob_file,
                                                     const LayerExpect& expect,
                                                     const std::string& diff_id, Staged staged) {
  const std::string hex = DigestHex(diff_id);
  auto discard_staged = [&] {
    if (!staged.dir.empty()) (void)fsutil::RemoveTree(staged.dir);
  };
  Result<store_detail::FileLock> layer_lock =
      store_detail::FileLock::Acquire(Tmp() + "/" + hex + ".lock");
  if (!layer_lock.ok()) {
    discard_staged();
    return layer_lock.status();
  }
  if (auto present = PresentLayer(diff_id, expect)) {
    discard_staged();
    return *present;
  }
  UnpackedLayer layer;
  if (staged.layer) {
    layer = *staged.layer;
  } else {
    staged.dir = TempPath("unpack");
    ASSIGN_OR_RETURN(layer, UnpackLayer(blob_file, staged.dir, expect, options.limits));
  }
  // A directory without its .json is what a crash between the two renames leaves.
  std::string dir = LayerDir(diff_id);
  if (store_detail::Exists(dir)) (void)fsutil::RemoveTree(dir);
  if (::rename(staged.dir.c_str(), dir.c_str()) != 0) {
    Status failed = fsutil::ErrnoStatus("rename " + staged.dir + " to", dir, errno);
    discard_staged();
    return failed;
  }
  Json meta{{"diff_id", layer.diff_id},
            {"blob_digest", layer.blob_digest},
            {"blob_size", layer.blob_size},
            {"unpacked_bytes", layer.unpacked_bytes},
            {"entries", layer.entries}};
  RETURN_IF_ERROR(fsutil::WriteFileAtomic(Tmp(), LayerMeta(diff_id), meta.dump()));
  Pin(hex);
  return layer;
}

std::vector<store_detail::StoredRecord> ImageStore::Impl::ReadAll() const {
  std::vector<store_detail::StoredRecord> out;
  for (const std::string& name : store_detail::ListDir(root + "/images")) {
    if (name.size() != 69 || name.substr(64) != ".json") continue;
    auto bytes = fsutil::ReadWholeFile(root + "/images/" + name, 64 << 20);
    if (!bytes.ok()) continue;
    Json j = Json::parse(*bytes, nullptr, false);
    if (j.is_discarded()) continue;
    auto record = store_detail::FromJson(j);
    if (record && DigestHex(record->record.id) + ".json" == name) out.push_back(*record);
  }
  return out;
}

Status ImageStore::Impl::Write(const store_detail::StoredRecord& s) const {
  return fsutil::WriteFileAtomic(Tmp(), ImagePath(s.record.id),
                                 store_detail::ToJson(s.record, s.last_used_ns).dump());
}

const store_detail::StoredRecord* ImageStore::Impl::Resolve(
    const std::vector<store_detail::StoredRecord>& all, const std::string& ref) {
  if (ref.empty()) return nullptr;
  auto by_id = [&](const std::string& id) -> const store_detail::StoredRecord* {
    for (const auto& s : all) {
      if (s.record.id == id) return &s;
    }
    return nullptr;
  };
  if (ref.rfind("sha256:", 0) == 0) return by_id(ref);
  if (ref.size() == 64 && store_detail::IsHex(ref)) return by_id("sha256:" + ref);
  std::string normalized = store_detail::Normalize(ref);
  for (const auto& s : all) {
    const ImageRecord& r = s.record;
    if (store_detail::Contains(r.names, ref) || store_detail::Contains(r.repo_digests, ref))
      return &s;
    if (!normalized.empty() && (store_detail::Contains(r.names, normalized) ||
                                store_detail::Contains(r.repo_digests, normalized))) {
      return &s;
    }
  }
  if (ref.size() >= 12 && ref.size() < 64 && store_detail::IsHex(ref)) {
    const store_detail::StoredRecord* found = nullptr;
    for (const auto& s : all) {
      if (DigestHex(s.record.id).rfind(ref, 0) == 0) {
        if (found != nullptr) return nullptr;  // ambiguous
        found = &s;
      }
    }
    return found;
  }
  return nullptr;
}

Status ImageStore::Impl::Record(const ImageRecord& record, bool* existed) {
  *existed = false;
  ASSIGN_OR_RETURN(store_detail::FileLock lock, IndexLock());
  std::vector<store_detail::StoredRecord> all = ReadAll();
  std::int64_t now = store_detail::NowUnix();
  store_detail::StoredRecord mine;
  mine.record = record;
  for (store_detail::StoredRecord& other : all) {
    if (other.record.id == record.id) {
      *existed = true;
      store_detail::MergeEarlier(other.record, &mine.record);
      continue;
    }
    // A name moves here from the image it named.
    auto& names = other.record.names;
    auto end = std::remove_if(names.begin(), names.end(), [&](const std::string& n) {
      return store_detail::Contains(record.names, n);
    });
    if (end != names.end()) {
      names.erase(end, names.end());
      RETURN_IF_ERROR(Write(other));
    }
  }
  if (mine.record.created_unix == 0) mine.record.created_unix = now;
  mine.record.last_used_unix = now;
  mine.last_used_ns = store_detail::NowNanos();
  return Write(mine);
}

// --- ImageStore ------------------------------------------------------------------------

std::string ImageStore::DefaultRoot() {
  if (const char* env = std::getenv("PJEMU_IMAGE_STORE"); env != nullptr && *env != '\0') {
    return env;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/pjemu/images";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.cache/pjemu/images";
}

Result<std::shared_ptr<ImageStore>> ImageStore::Open(const StoreOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->root = options.root.empty() ? DefaultRoot() : options.root;
  while (impl->root.size() > 1 && impl->root.back() == '/') impl->root.pop_back();
  for (const char* sub : {"/blobs/sha256", "/layers", "/images", "/tmp"}) {
    RETURN_IF_ERROR(fsutil::MakeDirs(impl->root + sub));
  }
  {
    ASSIGN_OR_RETURN(store_detail::FileLock lock, impl->IndexLock());
    (void)lock;
  }
  // Staging left by a crashed process (a day old: a live one renames within minutes).
  std::int64_t now = store_detail::NowUnix();
  for (const std::string& name : store_detail::ListDir(impl->Tmp())) {
    if (name.size() > 5 && name.substr(name.size() - 5) == ".lock") continue;
    struct stat st {};
    std::string path = impl->Tmp() + "/" + name;
    if (::lstat(path.c_str(), &st) == 0 && now - st.st_mtime > 86400) {
      (void)fsutil::RemoveTree(path);
    }
  }
  return std::shared_ptr<ImageStore>(new ImageStore(std::move(impl)));
}

ImageStore::ImageStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageStore::~ImageStore() = default;

const std::string& ImageStore::root() const { return impl_->root; }

std::optional<ImageRecord> ImageStore::Find(const std::string& ref) const {
  std::vector<store_detail::StoredRecord> all = impl_->ReadAll();
  const store_detail::StoredRecord* found = Impl::Resolve(all, ref);
  if (found == nullptr) return std::nullopt;
  return found->record;
}

std::vector<ImageRecord> ImageStore::List() const {
  std::vector<ImageRecord> out;
  for (auto& s : impl_->ReadAll()) out.push_back(std::move(s.record));
  std::sort(out.begin(), out.end(), [](const ImageRecord& a, const ImageRecord& b) {
    return std::tie(a.created_unix, a.id) < std::tie(b.created_unix, b.id);
  });
  return out;
}

Result<std::vector<std::string>> ImageStore::LayerDirs(const ImageRecord& image) const {
  std::vector<std::string> dirs;
  for (auto it = image.diff_ids.rbegin(); it != image.diff_ids.rend(); ++it) {
    if (!CheckDigest(*it).ok() || !impl_->LayerPresent(*it)) {
      return Status(Code::kNotFound, "layer " + *it + " of image " + image.id + " not found");
    }
    dirs.push_back(impl_->LayerDir(*it));
  }
  return dirs;
}

bool ImageStore::HasBlob(const std::string& digest) const {
  return CheckDigest(digest).ok() && store_detail::Exists(impl_->BlobPath(digest));
}

Result<std::string> ImageStore::ReadBlob(const std::string& digest) const {
  RETURN_IF_ERROR(CheckDigest(digest));
  auto bytes = fsutil::ReadWholeFile(impl_->BlobPath(digest), std::int64_t(256) << 20);
  if (!bytes.ok() && bytes.status().code() == Code::kNotFound) {
    return Status(Code::kNotFound, "blob " + digest + " not found");
  }
  return bytes;
}

Status ImageStore::PutBlob(const std::string& digest, const std::string& bytes) {
  RETURN_IF_ERROR(CheckDigest(digest));
  std::string actual = Sha256Of(bytes);
  if (actual != digest) {
    return Status(Code::kInvalid, "digest mismatch: expected " + digest + ", got " + actual);
  }
  impl_->Pin(DigestHex(digest));
  if (store_detail::Exists(impl_->BlobPath(digest))) return Status::Ok();
  return fsutil::WriteFileAtomic(impl_->Tmp(), impl_->BlobPath(digest), bytes);
}

std::string ImageStore::TempPath(const std::string& hint) const { return impl_->TempPath(hint); }

bool ImageStore::HasLayer(const std::string& diff_id) const {
  return CheckDigest(diff_id).ok() && impl_->LayerPresent(diff_id);
}

Result<UnpackedLayer> ImageStore::AddLayer(const std::string& blob_file,
                                           const LayerExpect& expect) {
  Impl& impl = *impl_;
  // With an unknown DiffID, unpack first to learn it.
  Impl::Staged staged;
  std::string diff_id = expect.diff_id;
  if (!diff_id.empty()) {
    RETURN_IF_ERROR(CheckDigest(diff_id));
    if (auto present = impl.PresentLayer(diff_id, expect)) return *present;
  } else {
    staged.dir = impl.TempPath("unpack");
    ASSIGN_OR_RETURN(UnpackedLayer layer,
                     UnpackLayer(blob_file, staged.dir, expect, impl.options.limits));
    staged.layer = layer;
    diff_id = layer.diff_id;
  }
  // One unpack per layer: threads of this process wait here, other processes on the flock.
  Impl::UnpackTurn turn(impl, DigestHex(diff_id));
  return impl.InstallLayer(blob_file, expect, diff_id, std::move(staged));
}

Status ImageStore::Commit(ImageRecord record) {
  Impl& impl = *impl_;
  RETURN_IF_ERROR(CheckDigest(record.id));
  for (const std::string& diff_id : record.diff_ids) {
    RETURN_IF_ERROR(CheckDigest(diff_id));
    if (!impl.LayerPresent(diff_id)) {
      return Status(Code::kNotFound,
                    "layer " + diff_id + " of image " + record.id + " is not in the store");
    }
  }
  bool existed = false;
  RETURN_IF_ERROR(impl.Record(record, &existed));
  std::vector<std::string> used = record.diff_ids;
  used.push_back(record.id);
  if (!record.manifest_digest.empty()) used.push_back(record.manifest_digest);
  if (impl.options.max_bytes > 0 && DiskUsage() > impl.options.max_bytes) {
    ASSIGN_OR_RETURN(PruneReport report, Prune({record.id}));
    (void)report;
    std::int64_t usage = DiskUsage();
    if (usage > impl.options.max_bytes) {
      if (!existed) {
        impl.Unpin(used);
        (void)Remove(record.id);
        (void)Prune({});
      }
      return Status(Code::kRequestEntityTooLarge,
                    "image " + record.id + " does not fit under the image store's size cap of " +
                        std::to_string(impl.options.max_bytes) + " bytes (" +
                        std::to_string(usage) + " bytes needed)");
    }
  }
  impl.Unpin(used);
  return Status::Ok();
}

void ImageStore::MarkUsed(const std::string& id) {
  Impl& impl = *impl_;
  Result<store_detail::FileLock> lock = impl.IndexLock();
  if (!lock.ok()) return;
  std::vector<store_detail::StoredRecord> all = impl.ReadAll();
  const store_detail::StoredRecord* found = Impl::Resolve(all, id);
  if (found == nullptr) return;
  store_detail::StoredRecord s = *found;
  s.record.last_used_unix = store_detail::NowUnix();
  s.last_used_ns = store_detail::NowNanos();
  (void)impl.Write(s);
}

Result<std::vector<std::string>> ImageStore::Remove(const std::string& ref) {
  Impl& impl = *impl_;
  ASSIGN_OR_RETURN(store_detail::FileLock lock, impl.IndexLock());
  std::vector<store_detail::StoredRecord> all = impl.ReadAll();
  const store_detail::StoredRecord* found = Impl::Resolve(all, ref);
  if (found == nullptr) {
    return Status(Code::kNotFound, "image \"" + ref + "\" not found");
  }
  store_detail::StoredRecord s = *found;
  ImageRecord& r = s.record;
  std::string normalized = store_detail::Normalize(ref);
  std::vector<std::string> removed;
  auto untag = [&](std::vector<std::string>& list) {
    for (const std::string& key : {ref, normalized}) {
      auto it = std::find(list.begin(), list.end(), key);
      if (!key.empty() && it != list.end()) {
        removed.push_back(*it);
        list.erase(it);
        return true;
      }
    }
    return false;
  };
  bool by_name = untag(r.names);
  bool by_digest = !by_name && untag(r.repo_digests);
  if ((by_name || by_digest) && !r.names.empty()) {
    RETURN_IF_ERROR(impl.Write(s));
    return removed;
  }
  // By ID, or its last name: the image goes.
  for (const auto& n : r.names) removed.push_back(n);
  for (const auto& d : r.repo_digests) removed.push_back(d);
  removed.push_back(r.id);
  if (::unlink(impl.ImagePath(r.id).c_str()) != 0 && errno != ENOENT) {
    return fsutil::ErrnoStatus("remove", impl.ImagePath(r.id), errno);
  }
  return removed;
}

RunConfig RunConfigOf(const ImageRecord& image) {
  RunConfig rc;
  auto strings = [](const Json& parent, const char* key) {
    std::vector<std::string> out;
    auto it = parent.find(key);
    if (it == parent.end() || !it->is_array()) return out;
    for (const Json& item : *it) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
  };
  auto text = [](const Json& parent, const char* key) -> std::string {
    auto it = parent.find(key);
    return it != parent.end() && it->is_string() ? it->get<std::string>() : "";
  };
  if (!image.config.is_object()) return rc;
  rc.os = text(image.config, "os");
  rc.architecture = text(image.config, "architecture");
  auto config = image.config.find("config");
  if (config == image.config.end() || !config->is_object()) return rc;
  rc.entrypoint = strings(*config, "Entrypoint");
  if (rc.entrypoint.size() == 1 && rc.entrypoint[0].empty()) rc.entrypoint.clear();
  rc.cmd = strings(*config, "Cmd");
  rc.env = strings(*config, "Env");
  rc.working_dir = text(*config, "WorkingDir");
  rc.user = text(*config, "User");
  return rc;
}

}  // namespace pjemu::image
