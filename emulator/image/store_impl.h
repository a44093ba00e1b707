// ImageStore's state (store.h), private to emulator/image: the layout's paths, the index of
// image records under the store's flock, the layers this process is unpacking, and the layers
// and blobs this object added that Prune must keep for a while (pins). The index, blobs and
// layers are in store.cc; Prune, the size cap and the pins in store_prune.cc.
// Thread safety: mu guards unpacking and pinned; the files under root are guarded by
// IndexLock() (images/) and a per-layer flock (layers/).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/image/digest.h"
#include "emulator/image/fs_util.h"
#include "emulator/image/store.h"

namespace pjemu::image {

namespace store_detail {

std::int64_t NowUnix();
std::int64_t NowNanos();
// lstat succeeds (a symlink counts).
bool Exists(const std::string& path);
// Lowercase hex, not empty.
bool IsHex(const std::string& text);
// The names in a directory, sorted ("." and ".." left out); none when it cannot be opened.
std::vector<std::string> ListDir(const std::string& path);

// An exclusive flock(2) on a file, held while the object lives.
class FileLock {
 public:
  static Result<FileLock> Acquire(const std::string& path);

 private:
  fsutil::UniqueFd fd_;  // closing it releases the lock
};

// An image record as images/<hex>.json holds it.
struct StoredRecord {
  ImageRecord record;
  std::int64_t last_used_ns = 0;  // orders images used within one second
};

}  // namespace store_detail

struct ImageStore::Impl {
  StoreOptions options;
  std::string root;

  std::mutex mu;
  std::condition_variable cv;
  std::set<std::string> unpacking;             // DiffID hex being unpacked here
  std::map<std::string, std::int64_t> pinned;  // layer/blob hex -> added at (unix)

  // A layer unpacked to learn its DiffID before its turn (a docker-save layer.tar).
  struct Staged {
    std::string dir;  // under tmp/; "" when nothing was unpacked yet
    std::optional<UnpackedLayer> layer;
  };

  // This process's turn to install one layer: threads wait for each other's turn to end.
  class UnpackTurn {
   public:
    UnpackTurn(Impl& impl, std::string hex);
    ~UnpackTurn();
    UnpackTurn(const UnpackTurn&) = delete;
    UnpackTurn& operator=(const UnpackTurn&) = delete;

   private:
    Impl& impl_;
    std::string hex_;
  };

  std::string BlobPath(const std::string& digest) const {
    return root + "/blobs/sha256/" + DigestHex(digest);
  }
  std::string LayerDir(const std::string& diff_id) const {
    return root + "/layers/" + DigestHex(diff_id);
  }
  std::string LayerMeta(const std::string& diff_id) const { return LayerDir(diff_id) + ".json"; }
  std::string ImagePath(const std::string& id) const {
    return root + "/images/" + DigestHex(id) + ".json";
  }
  std::string Tmp() const { return root + "/tmp"; }
  // A fresh path under tmp/ named after hint (see ImageStore::TempPath).
  std::string TempPath(const std::string& hint) const;

  Result<store_detail::FileLock> IndexLock() const {
    return store_detail::FileLock::Acquire(root + "/lock");
  }

  // --- pins (store_prune.cc) ---
  // Keeps a layer or blob (by hex) from Prune for a while (kPinSeconds, 10 minutes).
  void Pin(const std::string& hex);
  bool Pinned(const std::string& hex);
  void Unpin(const std::vector<std::string>& digests);

  // --- layers (store.cc) ---
  bool LayerPresent(const std::string& diff_id) const;
  std::optional<UnpackedLayer> ReadLayerMeta(const std::string& diff_id) const;
  // The present layer as AddLayer returns it (expect's blob digest and size), pinned.
  std::optional<UnpackedLayer> PresentLayer(const std::string& diff_id, const LayerExpect& expect);
  // In the layer's turn: under its flock, the layer another unpacker installed meanwhile, else
  // staged (or blob_file unpacked now) renamed into layers/ with its .json.
  Result<UnpackedLayer> InstallLayer(const std::string& blob_file, const LayerExpect& expect,
                                     const std::string& diff_id, Staged staged);

  // --- the index (store.cc) ---
  std::vector<store_detail::StoredRecord> ReadAll() const;
  Status Write(const store_detail::StoredRecord& s) const;
  // Find over a snapshot of the records.
  static const store_detail::StoredRecord* Resolve(
      const std::vector<store_detail::StoredRecord>& all, const std::string& ref);
  // Commit's index update under the lock: record written (merged with its earlier self), its
  // names taken from the images they named. *existed when the image was already recorded.
  Status Record(const ImageRecord& record, bool* existed);

  // --- prune (store_prune.cc) ---
  // Everything removable under the lock; see Prune.
  Result<PruneReport> PruneLocked(const std::set<std::string>& in_use);
  Status RemoveImageFile(const store_detail::StoredRecord& s, PruneReport* report) const;
  // Layers and blobs none of `images` uses and not pinned.
  Status Sweep(const std::vector<store_detail::StoredRecord>& images, PruneReport* report);
  Status SweepLayers(const std::set<std::string>& used, PruneReport* report);
  void SweepBlobs(const std::set<std::string>& used, PruneReport* report);
  // While over max_bytes: the least recently used of `kept` not in in_use, and what only it used.
  Status EvictLeastRecentlyUsed(std::vector<store_detail::StoredRecord> kept,
                                const std::set<std::string>& in_use, PruneReport* report);
};

}  // namespace pjemu::image
