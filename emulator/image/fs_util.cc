#include "emulator/image/fs_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

namespace pjemu::image::fsutil {

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string ErrnoText(int error) {
  char buffer[256];
  // GNU strerror_r returns the text (possibly not in buffer).
  return std::string(strerror_r(error, buffer, sizeof buffer));
}

Status ErrnoStatus(const std::string& what, const std::string& path, int error) {
  return Status(Code::kInternal, what + " " + path + ": " + ErrnoText(error));
}

Result<std::string> ReadWholeFile(const std::string& path, std::int64_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    int error = errno;
    if (error == ENOENT) {
      return Status(Code::kNotFound, "open " + path + ": " + ErrnoText(error));
    }
    return ErrnoStatus("open", path, error);
  }
  std::string out;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path, errno);
    }
    if (n == 0) break;
    if (static_cast<std::int64_t>(out.size() + n) > max_bytes) {
      return Status(Code::kRequestEntityTooLarge,
                    "read " + path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

namespace {

Status WriteAll(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomic(const std::string& tmp_dir, const std::string& path,
                       const std::string& bytes) {
  std::string tmp = tmp_dir + "/" + UniqueName("write");
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoStatus("create", tmp, errno);
  Status written = WriteAll(fd.get(), bytes.data(), bytes.size(), tmp);
  if (written.ok() && ::fsync(fd.get()) != 0) written = ErrnoStatus("fsync", tmp, errno);
  fd.Reset();
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = ErrnoStatus("rename " + tmp + " to", path, errno);
  }
  if (!written.ok()) ::unlink(tmp.c_str());
  return written;
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::Ok();
  // One mkdir when the parent exists (the usual case); the parents first when it does not.
  if (::mkdir(path.c_str(), 0755) == 0) return Status::Ok();
  if (errno == ENOENT) {
    const std::size_t end = path.find_last_not_of('/');
    const std::size_t slash = end == std::string::npos ? end : path.find_last_of('/', end);
    if (slash != std::string::npos && slash > 0) {
      if (Status parent = MakeDirs(path.substr(0, slash)); !parent.ok()) return parent;
    }
    if (::mkdir(path.c_str(), 0755) == 0) return Status::Ok();
  }
  if (errno != EEXIST) return ErrnoStatus("mkdir", path, errno);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat", path, errno);
  if (!S_ISDIR(st.st_mode)) return Status(Code::kInternal, "mkdir " + path + ": not a directory");
  return Status::Ok();
}

namespace {

Status RemoveChildren(int dirfd, const std::string& shown, int depth) {
  if (depth > 4096) return Status(Code::kInternal, "remove " + shown + ": tree too deep");
  int dup_fd = ::dup(dirfd);
  if (dup_fd < 0) return ErrnoStatus("dup", shown, errno);
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    int error = errno;
    ::close(dup_fd);
    return ErrnoStatus("opendir", shown, error);
  }
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return ErrnoStatus("stat", shown + "/" + name, errno);
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(
          ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child.valid() && errno == EACCES && geteuid() != 0) {
        ::fchmodat(dirfd, name.c_str(), (st.st_mode & 07777) | S_IRWXU, 0);
        child = UniqueFd(
            ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      }
      if (!child.valid()) return ErrnoStatus("open", shown + "/" + name, errno);
      if (geteuid() != 0) ::fchmod(child.get(), (st.st_mode & 07777) | S_IRWXU);
      RETURN_IF_ERROR(RemoveChildren(child.get(), shown + "/" + name, depth + 1));
      child.Reset();
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return ErrnoStatus("rmdir", shown + "/" + name, errno);
      }
    } else if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus("unlink", shown + "/" + name, errno);
    }
  }
  return Status::Ok();
}

}  // namespace

Status RemoveTreeAt(int dirfd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus("stat", name, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus("unlink", name, errno);
    }
    return Status::Ok();
  }
  UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!child.valid()) return ErrnoStatus("open", name, errno);
  if (geteuid() != 0) ::fchmod(child.get(), (st.st_mode & 07777) | S_IRWXU);
  RETURN_IF_ERROR(RemoveChildren(child.get(), name, 0));
  child.Reset();
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoStatus("rmdir", name, errno);
  }
  return Status::Ok();
}

Status RemoveTree(const std::string& path) { return RemoveTreeAt(AT_FDCWD, path); }

namespace {

std::int64_t AllocatedAt(int dirfd, const char* name, std::set<std::pair<dev_t, ino_t>>* seen,
                         int depth) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  std::int64_t total = 0;
  if (st.st_nlink <= 1 || S_ISDIR(st.st_mode) || seen->insert({st.st_dev, st.st_ino}).second) {
    total += static_cast<std::int64_t>(st.st_blocks) * 512;
  }
  if (!S_ISDIR(st.st_mode) || depth > 4096) return total;
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return total;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return total;
  }
  while (dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    total += AllocatedAt(::dirfd(dir), entry->d_name, seen, depth + 1);
  }
  ::closedir(dir);
  return total;
}

}  // namespace

std::int64_t AllocatedBytes(const std::string& path, std::set<std::pair<dev_t, ino_t>>* seen) {
  std::set<std::pair<dev_t, ino_t>> local;
  return AllocatedAt(AT_FDCWD, path.c_str(), seen != nullptr ? seen : &local, 0);
}

std::string UniqueName(const std::string& hint) {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t salt = std::random_device{}();
  return hint + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" +
         std::to_string((salt ^ (counter.load() * 0x9e3779b97f4a7c15ULL)) % 1000000007ULL);
}

}  // namespace pjemu::image::fsutil
