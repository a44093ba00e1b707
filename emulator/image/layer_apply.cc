// Applier: each tar entry applied by hand below an fd of the layer's directory (openat with
// O_NOFOLLOW on every parent, mkdirat, linkat, symlinkat, mknodat), its mode, owner, times and
// xattrs as the tar says; whiteouts as overlayfs reads them.
#include "emulator/image/layer_apply.h"

#include <string_view>

#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace pjemu::image::unpack_detail {

using fsutil::ErrnoText;
using fsutil::UniqueFd;

Applier::Applier(int root_fd, std::string layer, const UnpackLimits& limits)
    : root_fd_(root_fd), layer_(std::move(layer)), limits_(limits), root_(geteuid() == 0) {}

Status Applier::EntryError(const std::string& name, const std::string& why) const {
  return Status(Code::kInvalid, "layer " + layer_ + ": entry \"" + name + "\": " + why);
}

Status Applier::SysError(const std::string& name, const char* what, int error) const {
  Code code = (error == ENOSPC || error == EIO || error == EDQUOT || error == ENOMEM ||
               error == EROFS || error == EPERM || error == EACCES || error == EMFILE)
                  ? Code::kInternal
                  : Code::kInvalid;
  return Status(code,
                "layer " + layer_ + ": entry \"" + name + "\": " + what + ": " + ErrnoText(error));
}

Result<std::vector<std::string>> Applier::SplitPath(const std::string& name) const {
  if (name.size() > limits_.max_path) {
    return EntryError(name.substr(0, 64) + "...",
                      "path longer than " + std::to_string(limits_.max_path) + " bytes");
  }
  if (!name.empty() && name[0] == '/') return EntryError(name, "absolute path");
  std::vector<std::string> components;
  const std::string_view path(name);
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") return EntryError(name, "path leaves the layer");
    if (part.find('\0') != std::string_view::npos) return EntryError(name, "NUL in path");
    if (!part.empty() && part != ".") components.emplace_back(part);
    start = end + 1;
  }
  return components;
}

Result<UniqueFd> Applier::OpenDir(const std::vector<std::string>& components, std::size_t count,
                                  bool create, const std::string& name) const {
  UniqueFd current(::dup(root_fd_));
  if (!current.valid()) return SysError(name, "dup", errno);
  for (std::size_t i = 0; i < count; ++i) {
    const char* part = components[i].c_str();
    int fd = ::openat(current.get(), part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(current.get(), part, 0755) != 0 && errno != EEXIST) {
        return SysError(name, "mkdir parent", errno);
      }
      fd = ::openat(current.get(), part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      int error = errno;
      struct stat st {};
      if (::fstatat(current.get(), part, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) return EntryError(name, "parent is a symlink");
        if (!S_ISDIR(st.st_mode)) return EntryError(name, "parent is not a directory");
      }
      if (error == ENOENT) return EntryError(name, "parent does not exist");
      return SysError(name, "open parent", error);
    }
    current = UniqueFd(fd);
  }
  return current;
}

Status Applier::RemoveExisting(int parent, const std::string& base, const std::string& name,
                               bool keep_dir, bool* is_dir) const {
  *is_dir = false;
  struct stat st {};
  if (::fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return SysError(name, "stat", errno);
  }
  if (S_ISDIR(st.st_mode)) {
    if (keep_dir) {
      *is_dir = true;
      return Status::Ok();
    }
    Status removed = fsutil::RemoveTreeAt(parent, base);
    if (!removed.ok()) return EntryError(name, removed.message());
    return Status::Ok();
  }
  if (::unlinkat(parent, base.c_str(), 0) != 0) return SysError(name, "unlink", errno);
  return Status::Ok();
}

bool IsOverlayXattr(const char* key) {
  return std::strncmp(key, "trusted.overlay.", 16) == 0 ||
         std::strncmp(key, "user.overlay.", 13) == 0;
}

Status Applier::CheckXattrs(struct archive_entry* entry, const std::string& name) const {
  archive_entry_xattr_reset(entry);
  const char* key = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  while (archive_entry_xattr_next(entry, &key, &value, &size) == ARCHIVE_OK) {
    if (key != nullptr && IsOverlayXattr(key)) {
      return EntryError(name, std::string("xattr ") + key + " is not allowed");
    }
  }
  return Status::Ok();
}

Status Applier::ApplyXattrs(int fd, struct archive_entry* entry, const std::string& name) const {
  RETURN_IF_ERROR(CheckXattrs(entry, name));
  archive_entry_xattr_reset(entry);
  const char* key = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  while (archive_entry_xattr_next(entry, &key, &value, &size) == ARCHIVE_OK) {
    if (key == nullptr) continue;
    // Best effort, as containerd does for xattrs the filesystem refuses.
    (void)::fsetxattr(fd, key, value, size, 0);
  }
  return Status::Ok();
}

Status Applier::WriteData(struct archive* a, int fd, const std::string& name, std::int64_t size,
                          std::int64_t* written) const {
  const void* block = nullptr;
  std::size_t length = 0;
  la_int64_t offset = 0;
  for (;;) {
    int rc = archive_read_data_block(a, &block, &length, &offset);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) {
      const char* why = archive_error_string(a);
      return EntryError(name, why != nullptr ? why : "corrupt archive");
    }
    const char* data = static_cast<const char*>(block);
    while (length > 0) {
      ssize_t n = ::pwrite(fd, data, length, offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        return SysError(name, "write", errno);
      }
      data += n;
      length -= static_cast<std::size_t>(n);
      offset += n;
      *written += n;
    }
  }
  if (size > 0 && ::ftruncate(fd, size) != 0) return SysError(name, "truncate", errno);
  return Status::Ok();
}

void Applier::Times(struct archive_entry* entry, struct timespec times[2], bool* has) const {
  *has = archive_entry_mtime_is_set(entry) != 0;
  times[1].tv_sec = archive_entry_mtime(entry);
  times[1].tv_nsec = archive_entry_mtime_nsec(entry);
  if (archive_entry_atime_is_set(entry)) {
    times[0].tv_sec = archive_entry_atime(entry);
    times[0].tv_nsec = archive_entry_atime_nsec(entry);
  } else {
    times[0] = times[1];
  }
}

std::string EntryName(struct archive_entry* entry) {
  const char* name = archive_entry_pathname(entry);
  if (name == nullptr) name = archive_entry_pathname_utf8(entry);
  return name != nullptr ? name : "";
}

std::string LinkName(const char* raw, const char* utf8) {
  if (raw != nullptr) return raw;
  return utf8 != nullptr ? utf8 : "";
}

// Whiteouts and the opaque marker (.wh.*).
Status Applier::ApplyWhiteout(const Entry& e) {
  if (e.base == ".wh..wh..opq") {
    ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, e.name));
    if (::fsetxattr(dir.get(), "trusted.overlay.opaque", "y", 1, 0) != 0) {
      return SysError(e.name, "set trusted.overlay.opaque", errno);
    }
    return Status::Ok();
  }
  if (e.base.rfind(".wh..wh.", 0) == 0) return Status::Ok();  // aufs metadata: ignored
  std::string target = e.base.substr(4);
  if (target.empty() || target == "." || target == "..") {
    return EntryError(e.name, "invalid whiteout name");
  }
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, e.name));
  struct stat st {};
  if (::fstatat(dir.get(), target.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return Status::Ok();  // this layer's own file is not hidden by its whiteout
  }
  if (::mknodat(dir.get(), target.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0) {
    return SysError(e.name, "mknod whiteout", errno);
  }
  if (e.has_times) ::utimensat(dir.get(), target.c_str(), e.times, AT_SYMLINK_NOFOLLOW);
  return Status::Ok();
}

// Hard links: the target resolves below the root like any other entry.
Status Applier::ApplyHardLink(const Entry& e, const std::string& link) {
  const std::string& name = e.name;
  if (!link.empty() && link[0] == '/') {
    return EntryError(name, "hard link target \"" + link + "\" is outside the layer");
  }
  Result<std::vector<std::string>> target = SplitPath(link);
  if (!target.ok() || target->empty()) {
    return EntryError(name, "hard link target \"" + link + "\" is outside the layer");
  }
  if (*target == e.components) return Status::Ok();
  Result<UniqueFd> target_dir = OpenDir(*target, target->size() - 1, false, name);
  if (!target_dir.ok()) {
    return EntryError(name, "hard link target \"" + link + "\" is not in the layer");
  }
  struct stat st {};
  if (::fstatat(target_dir->get(), target->back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return EntryError(name, "hard link target \"" + link + "\" is not in the layer");
  }
  if (S_ISDIR(st.st_mode)) {
    return EntryError(name, "hard link target \"" + link + "\" is a directory");
  }
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, name));
  bool is_dir = false;
  RETURN_IF_ERROR(RemoveExisting(dir.get(), e.base, name, false, &is_dir));
  if (::linkat(target_dir->get(), target->back().c_str(), dir.get(), e.base.c_str(), 0) != 0) {
    return SysError(name, "link", errno);
  }
  return Status::Ok();
}

Status Applier::ApplyFile(struct archive* a, struct archive_entry* entry, const Entry& e,
                          UnpackedLayer* result) {
  const std::string& name = e.name;
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, name));
  bool is_dir = false;
  RETURN_IF_ERROR(RemoveExisting(dir.get(), e.base, name, false, &is_dir));
  UniqueFd file(::openat(dir.get(), e.base.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file.valid()) return SysError(name, "create", errno);
  std::int64_t size = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
  std::int64_t written = 0;
  RETURN_IF_ERROR(WriteData(a, file.get(), name, size, &written));
  result->unpacked_bytes += std::max(size, written);
  if (root_ && ::fchown(file.get(), e.uid, e.gid) != 0) return SysError(name, "chown", errno);
  if (::fchmod(file.get(), e.mode) != 0) return SysError(name, "chmod", errno);
  RETURN_IF_ERROR(ApplyXattrs(file.get(), entry, name));
  if (e.has_times && ::futimens(file.get(), e.times) != 0) {
    return SysError(name, "utimes", errno);
  }
  return Status::Ok();
}

Status Applier::ApplyDirectory(struct archive_entry* entry, const Entry& e) {
  const std::string& name = e.name;
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, name));
  bool is_dir = false;
  RETURN_IF_ERROR(RemoveExisting(dir.get(), e.base, name, true, &is_dir));
  if (!is_dir && ::mkdirat(dir.get(), e.base.c_str(), 0700) != 0) {
    return SysError(name, "mkdir", errno);
  }
  UniqueFd self(
      ::openat(dir.get(), e.base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!self.valid()) return SysError(name, "open", errno);
  if (root_ && ::fchown(self.get(), e.uid, e.gid) != 0) return SysError(name, "chown", errno);
  RETURN_IF_ERROR(ApplyXattrs(self.get(), entry, name));
  DirAttrs attrs{e.components, e.mode, e.has_times, {e.times[0], e.times[1]}};
  dirs_.push_back(std::move(attrs));
  return Status::Ok();
}

Status Applier::ApplySymlink(struct archive_entry* entry, const Entry& e) {
  const std::string& name = e.name;
  std::string link = LinkName(archive_entry_symlink(entry), archive_entry_symlink_utf8(entry));
  if (link.empty()) return EntryError(name, "empty symlink target");
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, name));
  bool is_dir = false;
  RETURN_IF_ERROR(RemoveExisting(dir.get(), e.base, name, false, &is_dir));
  if (::symlinkat(link.c_str(), dir.get(), e.base.c_str()) != 0) {
    return SysError(name, "symlink", errno);
  }
  if (root_ && ::fchownat(dir.get(), e.base.c_str(), e.uid, e.gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return SysError(name, "chown", errno);
  }
  if (e.has_times) ::utimensat(dir.get(), e.base.c_str(), e.times, AT_SYMLINK_NOFOLLOW);
  return Status::Ok();
}

Status Applier::ApplyFifo(const Entry& e) {
  const std::string& name = e.name;
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(e.components, e.parents, true, name));
  bool is_dir = false;
  RETURN_IF_ERROR(RemoveExisting(dir.get(), e.base, name, false, &is_dir));
  if (::mknodat(dir.get(), e.base.c_str(), S_IFIFO | 0600, 0) != 0) {
    return SysError(name, "mkfifo", errno);
  }
  if (root_ && ::fchownat(dir.get(), e.base.c_str(), e.uid, e.gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return SysError(name, "chown", errno);
  }
  // Just made by us and not a symlink: fchmodat may follow.
  if (::fchmodat(dir.get(), e.base.c_str(), e.mode, 0) != 0) {
    return SysError(name, "chmod", errno);
  }
  if (e.has_times) ::utimensat(dir.get(), e.base.c_str(), e.times, AT_SYMLINK_NOFOLLOW);
  return Status::Ok();
}

Status Applier::Apply(struct archive* a, struct archive_entry* entry, UnpackedLayer* result) {
  Entry e;
  e.name = EntryName(entry);
  if (e.name.empty()) return EntryError(e.name, "empty path");
  ASSIGN_OR_RETURN(e.components, SplitPath(e.name));
  if (e.components.empty()) return Status::Ok();  // "./": the layer's root itself
  e.base = e.components.back();
  e.parents = e.components.size() - 1;
  RETURN_IF_ERROR(CheckXattrs(entry, e.name));
  e.mode = archive_entry_perm(entry) & 07777;
  e.uid = static_cast<uid_t>(archive_entry_uid(entry));
  e.gid = static_cast<gid_t>(archive_entry_gid(entry));
  Times(entry, e.times, &e.has_times);

  if (e.base.rfind(".wh.", 0) == 0) return ApplyWhiteout(e);
  const char* hardlink_raw = archive_entry_hardlink(entry);
  const char* hardlink_utf8 =
      hardlink_raw == nullptr ? archive_entry_hardlink_utf8(entry) : nullptr;
  if (hardlink_raw != nullptr || hardlink_utf8 != nullptr) {
    return ApplyHardLink(e, LinkName(hardlink_raw, hardlink_utf8));
  }
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG:
      return ApplyFile(a, entry, e, result);
    case AE_IFDIR:
      return ApplyDirectory(entry, e);
    case AE_IFLNK:
      return ApplySymlink(entry, e);
    case AE_IFIFO:
      return ApplyFifo(e);
    case AE_IFCHR:
    case AE_IFBLK:
      return EntryError(e.name, "device files are not allowed in a layer");
    case AE_IFSOCK:
      return Status::Ok();  // tar cannot carry a socket's content; skipped as tar does
    default:
      return EntryError(e.name, "unsupported entry type");
  }
}

void Applier::FinishDirectories() {
  for (const DirAttrs& attrs : dirs_) {
    // Re-resolved without following symlinks: a later entry may have replaced a parent.
    Result<UniqueFd> parent = OpenDir(attrs.components, attrs.components.size() - 1, false, "");
    if (!parent.ok()) continue;
    UniqueFd self(::openat(parent->get(), attrs.components.back().c_str(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!self.valid()) continue;
    ::fchmod(self.get(), attrs.mode);
    if (attrs.has_times) ::futimens(self.get(), attrs.times);
  }
}

}  // namespace pjemu::image::unpack_detail
