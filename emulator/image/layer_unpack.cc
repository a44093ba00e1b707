// UnpackLayer: a decompressing, hashing stream (zlib, libzstd) feeds libarchive's tar reader;
// each entry is applied by hand below an fd of the destination (openat with O_NOFOLLOW on
// every parent), so no entry can write through a symlink or outside the layer.
#include "emulator/image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "emulator/image/archive_reader.h"
#include "emulator/image/digest.h"
#include "emulator/image/fs_util.h"

namespace pjemu::image {

namespace unpack_detail {

using fsutil::ErrnoText;
using fsutil::UniqueFd;

constexpr std::size_t kChunk = 256 * 1024;

// The blob as read (hashed: the blob digest), decompressed (hashed: the DiffID), with the
// byte cap applied to the decompressed side.
class LayerStream {
 public:
  LayerStream(int fd, std::int64_t max_bytes) : fd_(fd), max_bytes_(max_bytes) {}
  ~LayerStream() {
    if (gzip_ready_) inflateEnd(&gzip_);
    if (zstd_ != nullptr) ZSTD_freeDStream(zstd_);
  }
  LayerStream(const LayerStream&) = delete;
  LayerStream& operator=(const LayerStream&) = delete;

  // Up to `cap` decompressed bytes into out; 0 at the end; kInvalid/kInternal on error.
  Result<std::size_t> Read(char* out, std::size_t cap) {
    if (!started_) RETURN_IF_ERROR(Start());
    std::size_t n = 0;
    switch (kind_) {
      case Kind::kPlain: {
        ASSIGN_OR_RETURN(n, ReadPlain(out, cap));
        break;
      }
      case Kind::kGzip: {
        ASSIGN_OR_RETURN(n, ReadGzip(out, cap));
        break;
      }
      case Kind::kZstd: {
        ASSIGN_OR_RETURN(n, ReadZstd(out, cap));
        break;
      }
    }
    diff_hash_.Update(out, n);
    total_ += static_cast<std::int64_t>(n);
    if (total_ > max_bytes_) {
      return Status(Code::kInvalid,
                    "layer is larger than " + std::to_string(max_bytes_) + " bytes uncompressed");
    }
    return n;
  }

  // Reads (and hashes) whatever follows the tar's end.
  Status Drain() {
    std::vector<char> sink(kChunk);
    for (;;) {
      ASSIGN_OR_RETURN(std::size_t n, Read(sink.data(), sink.size()));
      if (n == 0) return Status::Ok();
    }
  }

  std::string BlobDigest() { return blob_hash_.Final(); }
  std::string DiffId() { return diff_hash_.Final(); }
  std::int64_t blob_size() const { return blob_size_; }

 private:
  enum class Kind { kPlain, kGzip, kZstd };

  // Refills in_ when it is used up; false at the blob's end.
  Result<bool> Fill() {
    if (in_pos_ < in_.size()) return true;
    if (raw_eof_) return false;
    in_.resize(kChunk);
    for (;;) {
      ssize_t n = ::read(fd_, in_.data(), in_.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status(Code::kInternal, "read layer blob: " + ErrnoText(errno));
      }
      in_.resize(static_cast<std::size_t>(n));
      in_pos_ = 0;
      if (n == 0) {
        raw_eof_ = true;
        return false;
      }
      blob_hash_.Update(in_.data(), in_.size());
      blob_size_ += n;
      return true;
    }
  }

  Status Start() {
    started_ = true;
    // Gather at least 4 bytes (or the whole blob) to sniff the compression.
    std::string head;
    while (head.size() < 4) {
      ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) break;
      head.append(in_.data() + in_pos_, in_.size() - in_pos_);
      in_pos_ = in_.size();
    }
    in_.assign(head.begin(), head.end());
    in_pos_ = 0;
    const auto* b = reinterpret_cast<const unsigned char*>(head.data());
    if (head.size() >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 0x08) {
      kind_ = Kind::kGzip;
      std::memset(&gzip_, 0, sizeof gzip_);
      if (inflateInit2(&gzip_, 16 + MAX_WBITS) != Z_OK) {
        return Status(Code::kInternal, "gzip: cannot initialize zlib");
      }
      gzip_ready_ = true;
    } else if (head.size() >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
      kind_ = Kind::kZstd;
      zstd_ = ZSTD_createDStream();
      if (zstd_ == nullptr) return Status(Code::kInternal, "zstd: cannot create a stream");
      ZSTD_initDStream(zstd_);
    }
    return Status::Ok();
  }

  Result<std::size_t> ReadPlain(char* out, std::size_t cap) {
    ASSIGN_OR_RETURN(bool more, Fill());
    if (!more) return std::size_t{0};
    std::size_t n = std::min(cap, in_.size() - in_pos_);
    std::memcpy(out, in_.data() + in_pos_, n);
    in_pos_ += n;
    return n;
  }

  Result<std::size_t> ReadGzip(char* out, std::size_t cap) {
    for (;;) {
      if (gzip_done_) {
        // A finished member: another one may follow (concatenated gzip); zero padding after
        // the last one (a tape-blocked writer's) is skipped, as gzip(1) does.
        ASSIGN_OR_RETURN(bool more, Fill());
        while (more && in_[in_pos_] == '\0') {
          ++in_pos_;
          ASSIGN_OR_RETURN(more, Fill());
        }
        if (!more) return std::size_t{0};
        inflateReset(&gzip_);
        gzip_done_ = false;
      }
      ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) return Status(Code::kInvalid, "gzip: unexpected EOF");
      gzip_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
      gzip_.avail_in = static_cast<uInt>(in_.size() - in_pos_);
      gzip_.next_out = reinterpret_cast<Bytef*>(out);
      gzip_.avail_out = static_cast<uInt>(cap);
      int rc = inflate(&gzip_, Z_NO_FLUSH);
      in_pos_ = in_.size() - gzip_.avail_in;
      std::size_t produced = cap - gzip_.avail_out;
      if (rc == Z_STREAM_END) {
        gzip_done_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status(Code::kInvalid,
                      std::string("gzip: ") + (gzip_.msg != nullptr ? gzip_.msg : "corrupt data"));
      }
      if (produced > 0) return produced;
    }
  }

  Result<std::size_t> ReadZstd(char* out, std::size_t cap) {
    for (;;) {
      ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) {
        if (zstd_pending_ != 0) return Status(Code::kInvalid, "zstd: unexpected EOF");
        return std::size_t{0};
      }
      ZSTD_inBuffer input{in_.data(), in_.size(), in_pos_};
      ZSTD_outBuffer output{out, cap, 0};
      std::size_t rc = ZSTD_decompressStream(zstd_, &output, &input);
      in_pos_ = input.pos;
      if (ZSTD_isError(rc)) {
        return Status(Code::kInvalid, std::string("zstd: ") + ZSTD_getErrorName(rc));
      }
      zstd_pending_ = rc;
      if (output.pos > 0) return output.pos;
    }
  }

  int fd_;
  std::int64_t max_bytes_;
  bool started_ = false;
  Kind kind_ = Kind::kPlain;
  std::vector<char> in_;
  std::size_t in_pos_ = 0;
  bool raw_eof_ = false;
  z_stream gzip_{};
  bool gzip_ready_ = false;
  bool gzip_done_ = false;
  ZSTD_DStream* zstd_ = nullptr;
  std::size_t zstd_pending_ = 0;
  Sha256 blob_hash_;
  Sha256 diff_hash_;
  std::int64_t blob_size_ = 0;
  std::int64_t total_ = 0;
};

struct ReadContext {
  LayerStream* stream;
  std::vector<char> buffer = std::vector<char>(kChunk);
  Status error;
};

la_ssize_t ReadCallback(struct archive* a, void* opaque, const void** out) {
  auto* context = static_cast<ReadContext*>(opaque);
  Result<std::size_t> n = context->stream->Read(context->buffer.data(), context->buffer.size());
  if (!n.ok()) {
    context->error = n.status();
    archive_set_error(a, EIO, "%s", n.status().message().c_str());
    return -1;
  }
  *out = context->buffer.data();
  return static_cast<la_ssize_t>(*n);
}

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
  Applier(int root_fd, std::string layer, const UnpackLimits& limits)
      : root_fd_(root_fd), layer_(std::move(layer)), limits_(limits), root_(geteuid() == 0) {}

  Status Apply(struct archive* a, struct archive_entry* entry, UnpackedLayer* result);
  void FinishDirectories();

 private:
  Status EntryError(const std::string& name, const std::string& why) const {
    return Status(Code::kInvalid, "layer " + layer_ + ": entry \"" + name + "\": " + why);
  }
  Status SysError(const std::string& name, const char* what, int error) const {
    Code code = (error == ENOSPC || error == EIO || error == EDQUOT || error == ENOMEM ||
                 error == EROFS || error == EPERM || error == EACCES || error == EMFILE)
                    ? Code::kInternal
                    : Code::kInvalid;
    return Status(
        code, "layer " + layer_ + ": entry \"" + name + "\": " + what + ": " + ErrnoText(error));
  }
  // The components of a member name ("./a//b/" -> a, b); kInvalid when absolute or with "..".
  Result<std::vector<std::string>> SplitPath(const std::string& name) const;
  // Opens the directory made of components [0, count) below the root, creating missing ones
  // when `create` (0755); a symlink or non-directory on the way is refused.
  Result<UniqueFd> OpenDir(const std::vector<std::string>& components, std::size_t count,
                           bool create, const std::string& name) const;
  Status RemoveExisting(int parent, const std::string& base, const std::string& name, bool keep_dir,
                        bool* is_dir) const;
  Status ApplyXattrs(int fd, struct archive_entry* entry, const std::string& name) const;
  Status CheckXattrs(struct archive_entry* entry, const std::string& name) const;
  Status WriteData(struct archive* a, int fd, const std::string& name, std::int64_t size,
                   std::int64_t* written) const;
  void Times(struct archive_entry* entry, struct timespec times[2], bool* has) const;

  int root_fd_;
  std::string layer_;
  UnpackLimits limits_;
  bool root_;
  std::vector<DirAttrs> dirs_;
};

Result<std::vector<std::string>> Applier::SplitPath(const std::string& name) const {
  if (name.size() > limits_.max_path) {
    return EntryError(name.substr(0, 64) + "...",
                      "path longer than " + std::to_string(limits_.max_path) + " bytes");
  }
  if (!name.empty() && name[0] == '/') return EntryError(name, "absolute path");
  std::vector<std::string> components;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    if (part == "..") return EntryError(name, "path leaves the layer");
    if (part.find('\0') != std::string::npos) return EntryError(name, "NUL in path");
    if (!part.empty() && part != ".") components.push_back(part);
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

Status Applier::Apply(struct archive* a, struct archive_entry* entry, UnpackedLayer* result) {
  std::string name = EntryName(entry);
  if (name.empty()) return EntryError(name, "empty path");
  ASSIGN_OR_RETURN(std::vector<std::string> components, SplitPath(name));
  if (components.empty()) return Status::Ok();  // "./": the layer's root itself
  const std::string base = components.back();
  const std::size_t parents = components.size() - 1;
  RETURN_IF_ERROR(CheckXattrs(entry, name));

  mode_t mode = archive_entry_perm(entry) & 07777;
  uid_t uid = static_cast<uid_t>(archive_entry_uid(entry));
  gid_t gid = static_cast<gid_t>(archive_entry_gid(entry));
  struct timespec times[2] = {};
  bool has_times = false;
  Times(entry, times, &has_times);

  // Whiteouts and the opaque marker.
  if (base.rfind(".wh.", 0) == 0) {
    if (base == ".wh..wh..opq") {
      ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
      if (::fsetxattr(dir.get(), "trusted.overlay.opaque", "y", 1, 0) != 0) {
        return SysError(name, "set trusted.overlay.opaque", errno);
      }
      return Status::Ok();
    }
    if (base.rfind(".wh..wh.", 0) == 0) return Status::Ok();  // aufs metadata: ignored
    std::string target = base.substr(4);
    if (target.empty() || target == "." || target == "..") {
      return EntryError(name, "invalid whiteout name");
    }
    ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
    struct stat st {};
    if (::fstatat(dir.get(), target.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      return Status::Ok();  // this layer's own file is not hidden by its whiteout
    }
    if (::mknodat(dir.get(), target.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0) {
      return SysError(name, "mknod whiteout", errno);
    }
    if (has_times) ::utimensat(dir.get(), target.c_str(), times, AT_SYMLINK_NOFOLLOW);
    return Status::Ok();
  }

  // Hard links: the target resolves below the root like any other entry.
  const char* hardlink_raw = archive_entry_hardlink(entry);
  const char* hardlink_utf8 =
      hardlink_raw == nullptr ? archive_entry_hardlink_utf8(entry) : nullptr;
  if (hardlink_raw != nullptr || hardlink_utf8 != nullptr) {
    std::string link = LinkName(hardlink_raw, hardlink_utf8);
    if (!link.empty() && link[0] == '/') {
      return EntryError(name, "hard link target \"" + link + "\" is outside the layer");
    }
    Result<std::vector<std::string>> target = SplitPath(link);
    if (!target.ok() || target->empty()) {
      return EntryError(name, "hard link target \"" + link + "\" is outside the layer");
    }
    if (*target == components) return Status::Ok();
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
    ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
    bool is_dir = false;
    RETURN_IF_ERROR(RemoveExisting(dir.get(), base, name, false, &is_dir));
    if (::linkat(target_dir->get(), target->back().c_str(), dir.get(), base.c_str(), 0) != 0) {
      return SysError(name, "link", errno);
    }
    return Status::Ok();
  }

  switch (archive_entry_filetype(entry)) {
    case AE_IFREG: {
      ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
      bool is_dir = false;
      RETURN_IF_ERROR(RemoveExisting(dir.get(), base, name, false, &is_dir));
      UniqueFd file(::openat(dir.get(), base.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!file.valid()) return SysError(name, "create", errno);
      std::int64_t size = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
      std::int64_t written = 0;
      RETURN_IF_ERROR(WriteData(a, file.get(), name, size, &written));
      result->unpacked_bytes += std::max(size, written);
      if (root_ && ::fchown(file.get(), uid, gid) != 0) return SysError(name, "chown", errno);
      if (::fchmod(file.get(), mode) != 0) return SysError(name, "chmod", errno);
      RETURN_IF_ERROR(ApplyXattrs(file.get(), entry, name));
      if (has_times && ::futimens(file.get(), times) != 0) return SysError(name, "utimes", errno);
      return Status::Ok();
    }
    case AE_IFDIR: {
      ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
      bool is_dir = false;
      RETURN_IF_ERROR(RemoveExisting(dir.get(), base, name, true, &is_dir));
      if (!is_dir && ::mkdirat(dir.get(), base.c_str(), 0700) != 0) {
        return SysError(name, "mkdir", errno);
      }
      UniqueFd self(
          ::openat(dir.get(), base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!self.valid()) return SysError(name, "open", errno);
      if (root_ && ::fchown(self.get(), uid, gid) != 0) return SysError(name, "chown", errno);
      RETURN_IF_ERROR(ApplyXattrs(self.get(), entry, name));
      DirAttrs attrs{components, mode, has_times, {times[0], times[1]}};
      dirs_.push_back(std::move(attrs));
      return Status::Ok();
    }
    case AE_IFLNK: {
      std::string link = LinkName(archive_entry_symlink(entry), archive_entry_symlink_utf8(entry));
      if (link.empty()) return EntryError(name, "empty symlink target");
      ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
      bool is_dir = false;
      RETURN_IF_ERROR(RemoveExisting(dir.get(), base, name, false, &is_dir));
      if (::symlinkat(link.c_str(), dir.get(), base.c_str()) != 0) {
        return SysError(name, "symlink", errno);
      }
      if (root_ && ::fchownat(dir.get(), base.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
        return SysError(name, "chown", errno);
      }
      if (has_times) ::utimensat(dir.get(), base.c_str(), times, AT_SYMLINK_NOFOLLOW);
      return Status::Ok();
    }
    case AE_IFIFO: {
      ASSIGN_OR_RETURN(UniqueFd dir, OpenDir(components, parents, true, name));
      bool is_dir = false;
      RETURN_IF_ERROR(RemoveExisting(dir.get(), base, name, false, &is_dir));
      if (::mknodat(dir.get(), base.c_str(), S_IFIFO | 0600, 0) != 0) {
        return SysError(name, "mkfifo", errno);
      }
      if (root_ && ::fchownat(dir.get(), base.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
        return SysError(name, "chown", errno);
      }
      // Just made by us and not a symlink: fchmodat may follow.
      if (::fchmodat(dir.get(), base.c_str(), mode, 0) != 0) return SysError(name, "chmod", errno);
      if (has_times) ::utimensat(dir.get(), base.c_str(), times, AT_SYMLINK_NOFOLLOW);
      return Status::Ok();
    }
    case AE_IFCHR:
    case AE_IFBLK:
      return EntryError(name, "device files are not allowed in a layer");
    case AE_IFSOCK:
      return Status::Ok();  // tar cannot carry a socket's content; skipped as tar does
    default:
      return EntryError(name, "unsupported entry type");
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

Result<UnpackedLayer> Unpack(int blob_fd, int dest_fd, const std::string& layer,
                             const LayerExpect& expect, const UnpackLimits& limits) {
  LayerStream stream(blob_fd, limits.max_bytes);
  ReadContext context{&stream, std::vector<char>(kChunk), Status::Ok()};
  ASSIGN_OR_RETURN(ArchiveReader reader, NewArchiveReader());
  struct archive* a = reader.get();
  archive_read_support_format_tar(a);
  archive_read_support_format_empty(a);
  auto archive_error = [&](const std::string& where) -> Status {
    if (!context.error.ok()) {
      return Status(context.error.code(), "layer " + layer + ": " + context.error.message());
    }
    const char* why = archive_error_string(a);
    return Status(Code::kInvalid,
                  "layer " + layer + ": " + where + (why != nullptr ? why : "corrupt archive"));
  };
  if (archive_read_open(a, &context, nullptr, ReadCallback, nullptr) != ARCHIVE_OK) {
    return archive_error("");
  }
  UnpackedLayer result;
  Applier applier(dest_fd, layer, limits);
  for (;;) {
    struct archive_entry* entry = nullptr;
    int rc = archive_read_next_header(a, &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return archive_error("");
    if (++result.entries > limits.max_entries) {
      return Status(Code::kInvalid, "layer " + layer + ": more than " +
                                        std::to_string(limits.max_entries) + " entries");
    }
    Status applied = applier.Apply(a, entry, &result);
    if (!applied.ok()) {
      if (!context.error.ok()) return archive_error("");
      return applied;
    }
  }
  Status drained = stream.Drain();
  if (!drained.ok()) {
    return Status(drained.code(), "layer " + layer + ": " + drained.message());
  }
  applier.FinishDirectories();
  result.blob_size = stream.blob_size();
  result.blob_digest = stream.BlobDigest();
  result.diff_id = stream.DiffId();
  if (expect.blob_size >= 0 && expect.blob_size != result.blob_size) {
    return Status(Code::kInvalid, "layer " + layer + ": size mismatch: expected " +
                                      std::to_string(expect.blob_size) + ", got " +
                                      std::to_string(result.blob_size));
  }
  if (!expect.blob_digest.empty() && expect.blob_digest != result.blob_digest) {
    return Status(Code::kInvalid, "layer " + layer + ": digest mismatch: expected " +
                                      expect.blob_digest + ", got " + result.blob_digest);
  }
  if (!expect.diff_id.empty() && expect.diff_id != result.diff_id) {
    return Status(Code::kInvalid, "layer " + layer + ": uncompressed digest mismatch: expected " +
                                      expect.diff_id + ", got " + result.diff_id);
  }
  return result;
}

}  // namespace unpack_detail

Result<UnpackedLayer> UnpackLayer(const std::string& blob_path, const std::string& dest,
                                  const LayerExpect& expect, const UnpackLimits& limits) {
  using fsutil::UniqueFd;
  std::string layer = !expect.blob_digest.empty() ? expect.blob_digest
                      : !expect.diff_id.empty()   ? expect.diff_id
                                                  : blob_path;
  UniqueFd blob(::open(blob_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!blob.valid()) {
    int error = errno;
    return Status(error == ENOENT ? Code::kNotFound : Code::kInternal,
                  "layer " + layer + ": open " + blob_path + ": " + fsutil::ErrnoText(error));
  }
  struct stat st {};
  if (::fstat(blob.get(), &st) == 0 && S_ISREG(st.st_mode) && expect.blob_size >= 0 &&
      st.st_size != expect.blob_size) {
    return Status(Code::kInvalid, "layer " + layer + ": size mismatch: expected " +
                                      std::to_string(expect.blob_size) + ", got " +
                                      std::to_string(st.st_size));
  }
  if (::mkdir(dest.c_str(), 0755) != 0) {
    return fsutil::ErrnoStatus("layer " + layer + ": mkdir", dest, errno);
  }
  Result<UnpackedLayer> result = [&]() -> Result<UnpackedLayer> {
    UniqueFd dest_fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dest_fd.valid()) return fsutil::ErrnoStatus("open", dest, errno);
    return unpack_detail::Unpack(blob.get(), dest_fd.get(), layer, expect, limits);
  }();
  if (!result.ok()) (void)fsutil::RemoveTree(dest);
  return result;
}

}  // namespace pjemu::image
