// UnpackLayer: a decompressing, hashing stream (zlib, libzstd) feeds libarchive's tar reader;
// each entry is applied by hand below an fd of the destination by an Applier (layer_apply.h:
// openat with O_NOFOLLOW on every parent), so no entry can write through a symlink or outside
// the layer.
#include "emulator/image/layer_unpack.h"

#include <archive.h>
#include <fcntl.h>
#include <sys/stat.h>
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
#include "emulator/image/layer_apply.h"

namespace pjemu::image {

namespace unpack_detail {

using fsutil::ErrnoText;

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
