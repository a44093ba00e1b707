// ImageStore: the node's images on disk, shared by every cluster of the user (and by several
// pjemu processes at once): content-addressed, each layer unpacked once and kept read-only as
// an overlayfs lower directory, keyed by its DiffID.
//
// Layout under root (ImageStore::DefaultRoot(): $PJEMU_IMAGE_STORE, else
// $XDG_CACHE_HOME/pjemu/images, else $HOME/.cache/pjemu/images):
//   blobs/sha256/<hex>     manifests, indexes and configs as fetched (digest-verified)
//   layers/<hex>/          a layer unpacked (UnpackLayer), <hex> its DiffID's
//   layers/<hex>.json      {diff_id, blob_digest, blob_size, unpacked_bytes}
//   images/<hex>.json      an ImageRecord, <hex> its ID's (the config digest)
//   tmp/                   staging: everything is written here and renamed into place
//   lock                   flock(2): writers of the index (Commit, Remove, Prune) and the
//                          unpack of one layer (tmp/<hex>.lock) exclude each other across
//                          processes
// The root must be on a filesystem overlayfs can take layers from (not an overlayfs itself).
//
// Errors: kInvalid for bad input (a digest that does not verify, a hostile layer: see
// layer_unpack.h), kNotFound for a reference that names no stored image, kInternal for I/O
// (naming the path and errno's text), kRequestEntityTooLarge when an image cannot fit under
// the size cap even after pruning.
// Thread safety: every method may be called from any thread; several processes may share a
// root. Records returned are copies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/image/layer_unpack.h"

namespace pjemu::image {

struct ImageRecord {
  std::string id;                          // the config's digest, "sha256:<hex>"
  std::vector<std::string> names;          // normalized references, "docker.io/library/busybox:1.36"
  std::vector<std::string> repo_digests;   // "docker.io/library/busybox@sha256:<manifest/index>"
  std::string manifest_digest;             // "" for a docker-save archive without one
  Json config;                             // the image config JSON as stored
  std::vector<std::string> diff_ids;       // bottom layer first
  std::int64_t size = 0;                   // config + layer blobs as fetched (containerd's size)
  std::string source;                      // "pull", "load <file>"
  std::int64_t created_unix = 0;           // when the record was first written
  std::int64_t last_used_unix = 0;         // Commit or MarkUsed
};

struct StoreOptions {
  std::string root;             // "" = DefaultRoot()
  std::int64_t max_bytes = 0;   // the size cap on layers+blobs (0 = none): Prune's LRU bound
  UnpackLimits limits;
};

struct PruneReport {
  int images = 0;
  int layers = 0;
  std::int64_t bytes = 0;
};

class ImageStore {
 public:
  static std::string DefaultRoot();
  // Creates the layout when missing. kInternal when root cannot be made or written.
  static Result<std::shared_ptr<ImageStore>> Open(const StoreOptions& options);
  ~ImageStore();

  const std::string& root() const;

  // By normalized reference ("busybox" finds docker.io/library/busybox:latest), repo digest
  // (name@sha256:...), or ID (sha256:<hex>, <hex>, or a unique prefix of at least 12 hex).
  std::optional<ImageRecord> Find(const std::string& ref) const;
  std::vector<ImageRecord> List() const;
  // The image's layer directories, TOP layer first (overlay lowerdir order). kNotFound naming
  // the DiffID when one is missing (pruned under a running cluster, or removed by hand).
  Result<std::vector<std::string>> LayerDirs(const ImageRecord& image) const;

  // Blobs (manifests, indexes, configs; layers pass through AddLayer).
  bool HasBlob(const std::string& digest) const;
  Result<std::string> ReadBlob(const std::string& digest) const;
  // Verifies bytes against digest (kInvalid `digest mismatch: expected X, got Y`) and stores.
  Status PutBlob(const std::string& digest, const std::string& bytes);
  // A fresh path under tmp/ for a download (the caller removes it when done).
  std::string TempPath(const std::string& hint) const;

  bool HasLayer(const std::string& diff_id) const;
  // Unpacks blob_file as a layer unless a layer of expect.diff_id (when given) is present;
  // concurrent callers for one layer (threads or processes) wait for one unpack. The blob
  // file is left to the caller. With expect.diff_id empty the layer's DiffID is learned from
  // the unpack (a docker-save layer.tar).
  Result<UnpackedLayer> AddLayer(const std::string& blob_file, const LayerExpect& expect);

  // Records an image whose layers are all present and points its names at it; a name that
  // named another image moves here (the other keeps its other names; with none left it
  // stays, untagged, until Prune). Then, over the cap, prunes (never this image); when it
  // still does not fit, a new image is removed again: kRequestEntityTooLarge. kNotFound when a
  // layer is missing.
  Status Commit(ImageRecord record);
  void MarkUsed(const std::string& id);
  // Untags `ref` (a name), or removes the image (an ID, or its last name): the removed
  // references, kNotFound when it names nothing. Layers go with Prune.
  Result<std::vector<std::string>> Remove(const std::string& ref);
  // Removes untagged images (no names left; a pull by digest should name its image
  // "name@sha256:..." to keep it), then layers and blobs no image uses, then, while over
  // max_bytes, the least recently used images whose IDs are not in in_use. Layers and blobs
  // this store object added in the last 10 minutes that no image uses yet (a pull between
  // AddLayer and Commit) are kept.
  Result<PruneReport> Prune(const std::set<std::string>& in_use = {});
  // Bytes of blobs and unpacked layers (allocated blocks, as du).
  std::int64_t DiskUsage() const;

 private:
  struct Impl;
  explicit ImageStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The image config's run defaults (config.config.*), as the runtime applies them.
struct RunConfig {
  std::vector<std::string> entrypoint;  // [""] in the config means none: empty here
  std::vector<std::string> cmd;
  std::vector<std::string> env;         // "NAME=value"
  std::string working_dir;
  std::string user;                     // as written: "", "1000", "app", "app:staff", "0:0"
  std::string os, architecture;
};
RunConfig RunConfigOf(const ImageRecord& image);

}  // namespace pjemu::image
