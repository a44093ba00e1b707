// Private helpers of pjemu_image (not part of its public interface): file descriptors that
// close themselves, errno texts, whole-file reads, atomic writes, and a recursive remove that
// never follows symlinks.
// Thread safety: reentrant (no shared state).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "emulator/common/status.h"

namespace pjemu::image::fsutil {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

// "No such file or directory" for errno's current value (or `error`).
std::string ErrnoText(int error);
// kInternal "<what> <path>: <errno text>".
Status ErrnoStatus(const std::string& what, const std::string& path, int error);

// The whole file; kNotFound when it does not exist, kInternal otherwise. At most max_bytes
// (kRequestEntityTooLarge beyond).
Result<std::string> ReadWholeFile(const std::string& path, std::int64_t max_bytes = std::int64_t(1)
                                                                                    << 30);
// Writes bytes to `tmp_dir`/<unique>, fsyncs it and renames it over `path`.
Status WriteFileAtomic(const std::string& tmp_dir, const std::string& path,
                       const std::string& bytes);
// mkdir -p with mode 0755: one system call when the parent exists.
Status MakeDirs(const std::string& path);

// Removes `name` under the directory dirfd (a file, or a tree, never following a symlink:
// a symlink is removed itself). OK when it does not exist.
Status RemoveTreeAt(int dirfd, const std::string& name);
// The same for a path.
Status RemoveTree(const std::string& path);
// Allocated bytes (st_blocks * 512) of `path` and everything under it, not following
// symlinks; an inode already in `seen` (a hard link) counts once.
std::int64_t AllocatedBytes(const std::string& path,
                            std::set<std::pair<dev_t, ino_t>>* seen = nullptr);
// A name unique within this host and process lifetime: "<hint>-<pid>-<counter>-<random>".
std::string UniqueName(const std::string& hint);

}  // namespace pjemu::image::fsutil
