// ImageStore::Prune and DiskUsage: untagged images, then layers and blobs no image uses (but
// those this object pinned), then least recently used images while over the size cap.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "emulator/image/store_impl.h"

namespace pjemu::image {

namespace store_detail {

// How long a layer or blob this process added stays safe from Prune without an image
// that uses it (a pull between AddLayer and Commit).
constexpr std::int64_t kPinSeconds = 600;

// The layer and blob hexes the images use: DiffIDs, configs, manifests, repo digests' targets.
void CollectUsedHexes(const std::vector<StoredRecord>& images, std::set<std::string>* layers,
                      std::set<std::string>* blobs) {
  for (const auto& s : images) {
    const ImageRecord& r = s.record;
    for (const auto& d : r.diff_ids) layers->insert(DigestHex(d));
    blobs->insert(DigestHex(r.id));
    if (!r.manifest_digest.empty()) blobs->insert(DigestHex(r.manifest_digest));
    for (const auto& rd : r.repo_digests) {
      std::size_t at = rd.rfind('@');
      if (at != std::string::npos) blobs->insert(DigestHex(rd.substr(at + 1)));
    }
  }
}

}  // namespace store_detail

void ImageStore::Impl::Pin(const std::string& hex) {
  std::lock_guard<std::mutex> lock(mu);
  pinned[hex] = store_detail::NowUnix();
}

bool ImageStore::Impl::Pinned(const std::string& hex) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = pinned.find(hex);
  if (it == pinned.end()) return false;
  if (store_detail::NowUnix() - it->second > store_detail::kPinSeconds) {
    pinned.erase(it);
    return false;
  }
  return true;
}

void ImageStore::Impl::Unpin(const std::vector<std::string>& digests) {
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& d : digests) pinned.erase(DigestHex(d));
}

Status ImageStore::Impl::RemoveImageFile(const store_detail::StoredRecord& s,
                                         PruneReport* report) const {
  if (::unlink(ImagePath(s.record.id).c_str()) != 0 && errno != ENOENT) {
    return fsutil::ErrnoStatus("remove", ImagePath(s.record.id), errno);
  }
  ++report->images;
  return Status::Ok();
}

Status ImageStore::Impl::SweepLayers(const std::set<std::string>& used, PruneReport* report) {
  for (const std::string& name : store_detail::ListDir(root + "/layers")) {
    std::string hex = name.size() > 5 && name.substr(name.size() - 5) == ".json"
                          ? name.substr(0, name.size() - 5)
                          : name;
    if (hex.size() != 64 || !store_detail::IsHex(hex) || used.count(hex) != 0 || Pinned(hex))
      continue;
    std::string path = root + "/layers/" + name;
    bool is_dir = name == hex;
    std::int64_t bytes = fsutil::AllocatedBytes(path);
    // The .json goes first: a layer without one is no longer "present".
    if (is_dir) {
      ::unlink((path + ".json").c_str());
      RETURN_IF_ERROR(fsutil::RemoveTree(path));
      ++report->layers;
    } else if (store_detail::Exists(root + "/layers/" + hex)) {
      continue;  // removed with its directory
    } else {
      ::unlink(path.c_str());
    }
    report->bytes += bytes;
  }
  return Status::Ok();
}

void ImageStore::Impl::SweepBlobs(const std::set<std::string>& used, PruneReport* report) {
  for (const std::string& hex : store_detail::ListDir(root + "/blobs/sha256")) {
    if (used.count(hex) != 0 || Pinned(hex)) continue;
    std::string path = root + "/blobs/sha256/" + hex;
    report->bytes += fsutil::AllocatedBytes(path);
    ::unlink(path.c_str());
  }
}

Status ImageStore::Impl::Sweep(const std::vector<store_detail::StoredRecord>& images,
                               PruneReport* report) {
  std::set<std::string> layers, blobs;
  store_detail::CollectUsedHexes(images, &layers, &blobs);
  RETURN_IF_ERROR(SweepLayers(layers, report));
  SweepBlobs(blobs, report);
  return Status::Ok();
}

Status ImageStore::Impl::EvictLeastRecentlyUsed(std::vector<store_detail::StoredRecord> kept,
                                                const std::set<std::string>& in_use,
                                                PruneReport* report) {
  std::sort(kept.begin(), kept.end(),
            [](const store_detail::StoredRecord& a, const store_detail::StoredRecord& b) {
              return a.last_used_ns < b.last_used_ns;
            });
  auto usage = [&] {
    return fsutil::AllocatedBytes(root + "/blobs") + fsutil::AllocatedBytes(root + "/layers");
  };
  while (usage() > options.max_bytes) {
    auto victim = std::find_if(kept.begin(), kept.end(), [&](const store_detail::StoredRecord& s) {
      return in_use.count(s.record.id) == 0;
    });
    if (victim == kept.end()) break;
    RETURN_IF_ERROR(RemoveImageFile(*victim, report));
    kept.erase(victim);
    RETURN_IF_ERROR(Sweep(kept, report));
  }
  return Status::Ok();
}

Result<PruneReport> ImageStore::Impl::PruneLocked(const std::set<std::string>& in_use) {
  PruneReport report;
  // 1. Untagged images.
  std::vector<store_detail::StoredRecord> kept;
  for (const auto& s : ReadAll()) {
    if (s.record.names.empty() && in_use.count(s.record.id) == 0) {
      RETURN_IF_ERROR(RemoveImageFile(s, &report));
    } else {
      kept.push_back(s);
    }
  }
  // 2. Layers and blobs no kept image uses (those this process just added are pinned).
  RETURN_IF_ERROR(Sweep(kept, &report));
  // 3. Over the cap: least recently used first.
  if (options.max_bytes > 0) {
    RETURN_IF_ERROR(EvictLeastRecentlyUsed(std::move(kept), in_use, &report));
  }
  return report;
}

Result<PruneReport> ImageStore::Prune(const std::set<std::string>& in_use) {
  ASSIGN_OR_RETURN(store_detail::FileLock lock, impl_->IndexLock());
  return impl_->PruneLocked(in_use);
}

std::int64_t ImageStore::DiskUsage() const {
  std::set<std::pair<dev_t, ino_t>> seen;
  return fsutil::AllocatedBytes(impl_->root + "/blobs", &seen) +
         fsutil::AllocatedBytes(impl_->root + "/layers", &seen);
}

}  // namespace pjemu::image
