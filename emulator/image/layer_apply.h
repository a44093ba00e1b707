// Applier: the tar entries of one layer applied below a directory fd, private to
// emulator/image (UnpackLayer, layer_unpack.cc, feeds it from its decompressing, hashing
// stream). Every parent is opened with O_NOFOLLOW below the root, so that no entry writes
// through a symlink or outside the layer; the refusals are layer_unpack.h's.
// Thread safety: one Applier per unpack, on one thread.
#pragma once

#include <archive.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/image/fs_util.h"
#include "emulator/image/layer_unpack.h"

namespace pjemu::image::unpack_detail {

// A deferred directory attribute update (after every entry, so that writing children does
// not disturb a directory's mtime, and a read-only mode does not block them).
struct DirAttrs {
  std::vector<std::string> components;
  mode_t mode;
  bool has_times;
  struct timespec times[2];
};

class Applier {
 public:
  // root_fd: the layer's (empty) directory; layer: its name in errors.
  Applier(int root_fd, std::string layer, const UnpackLimits& limits);

  // The entry libarchive just read (its data read from a as well); counts a regular file's
  // bytes into result->unpacked_bytes.
  Status Apply(struct archive* a, struct archive_entry* entry, UnpackedLayer* result);
  // The deferred modes and times of directories, once every entry is applied.
  void FinishDirectories();

 private:
  // One entry: where it goes and what the tar says of it.
  struct Entry {
    std::string name;                     // as the tar has it (for errors)
    std::vector<std::string> components;  // not empty
    std::string base;                     // components.back()
    std::size_t parents = 0;              // components.size() - 1
    mode_t mode = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    struct timespec times[2] = {};
    bool has_times = false;
  };

  Status EntryError(const std::string& name, const std::string& why) const;
  Status SysError(const std::string& name, const char* what, int error) const;
  // The components of a member name ("./a//b/" -> a, b); kInvalid when absolute or with "..".
  Result<std::vector<std::string>> SplitPath(const std::string& name) const;
  // Opens the directory made of components [0, count) below the root, creating missing ones
  // when `create` (0755); a symlink or non-directory on the way is refused.
  Result<fsutil::UniqueFd> OpenDir(const std::vector<std::string>& components, std::size_t count,
                                   bool create, const std::string& name) const;
  Status RemoveExisting(int parent, const std::string& base, const std::string& name, bool keep_dir,
                        bool* is_dir) const;
  Status ApplyXattrs(int fd, struct archive_entry* entry, const std::string& name) const;
  Status CheckXattrs(struct archive_entry* entry, const std::string& name) const;
  Status WriteData(struct archive* a, int fd, const std::string& name, std::int64_t size,
                   std::int64_t* written) const;
  void Times(struct archive_entry* entry, struct timespec times[2], bool* has) const;

  // The kinds of entry, each below its (created) parent directory.
  Status ApplyWhiteout(const Entry& e);
  Status ApplyHardLink(const Entry& e, const std::string& link);
  Status ApplyFile(struct archive* a, struct archive_entry* entry, const Entry& e,
                   UnpackedLayer* result);
  Status ApplyDirectory(struct archive_entry* entry, const Entry& e);
  Status ApplySymlink(struct archive_entry* entry, const Entry& e);
  Status ApplyFifo(const Entry& e);

  int root_fd_;
  std::string layer_;
  UnpackLimits limits_;
  bool root_;  // running as root: ownership is applied
  std::vector<DirAttrs> dirs_;
};

}  // namespace pjemu::image::unpack_detail
