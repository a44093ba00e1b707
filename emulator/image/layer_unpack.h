// UnpackLayer: one image layer blob (tar, tar+gzip or tar+zstd, sniffed from its first bytes)
// applied into an empty directory as an overlayfs lower layer, the way containerd's overlay
// snapshotter keeps a layer: regular files, directories, symlinks, hard links within the
// layer, fifos, modes, owners, mtimes and xattrs as the tar says; a whiteout `.wh.<name>` as a
// 0/0 character device `<name>`; an opaque marker `<dir>/.wh..wh..opq` as the xattr
// trusted.overlay.opaque=y on <dir>. The archive is read with libarchive from a decompressed
// stream (zlib, libzstd) that this file hashes on the way: the blob's digest (as stored) and
// the DiffID (the uncompressed tar) are both checked against what the manifest and config say.
//
// Hostile input is refused, nothing is written outside `dest`, and `dest` is removed again on
// any failure. kInvalid, naming the entry (`layer sha256:ab12…: entry "../etc/passwd": path
// leaves the layer`):
//  - absolute paths and `..` components; paths longer than limits.max_path;
//  - an entry whose parent resolves through a symlink (every parent is opened with O_NOFOLLOW
//    below dest: a symlink `a -> /etc` followed by `a/passwd` cannot write /etc/passwd);
//  - hard links whose target is outside the layer or not yet unpacked;
//  - block and character devices (a layer is unpacked for containers, never with devices);
//  - whiteouts that name `.`/`..`/a path, a bare `.wh.`;
//  - xattrs in the trusted.overlay.* / user.overlay.* namespaces (they would steer overlayfs);
//  - more than limits.max_bytes uncompressed or limits.max_entries entries (decompression
//    bombs);
//  - a truncated or corrupt stream (libarchive's or the decompressor's error);
//  - a blob whose size or digest differs from expect.blob_digest/blob_size, or whose
//    uncompressed digest differs from expect.diff_id (`digest mismatch: expected X, got Y`).
// setuid/setgid bits are kept (as a runtime does); ownership is applied as root only.
// Thread safety: reentrant; concurrent calls must use different dest directories.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::image {

struct UnpackLimits {
  std::int64_t max_bytes = std::int64_t(64) << 30;  // uncompressed tar bytes
  std::int64_t max_entries = 2'000'000;
  std::size_t max_path = 4096;
};

struct LayerExpect {
  std::string blob_digest;   // "" = not checked (a docker-save layer.tar names none)
  std::int64_t blob_size = -1;  // -1 = not checked
  std::string diff_id;       // "" = not checked
};

struct UnpackedLayer {
  std::string blob_digest;  // of the bytes as read
  std::string diff_id;      // of the uncompressed tar
  std::int64_t blob_size = 0;
  std::int64_t unpacked_bytes = 0;  // sum of regular files' sizes
  std::int64_t entries = 0;
};

// `dest` must not exist; its parent must. On success dest holds the layer.
Result<UnpackedLayer> UnpackLayer(const std::string& blob_path, const std::string& dest,
                                  const LayerExpect& expect, const UnpackLimits& limits = {});

}  // namespace pjemu::image
