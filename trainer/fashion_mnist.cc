#include "trainer/fashion_mnist.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

#include "trainer/build_config.h"
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
#include <zlib.h>
#endif

namespace pjemu::trainer {
namespace {

Status Corrupt(const std::string& path, const std::string& what) {
  return InternalError("corrupt idx file " + path + ": " + what);
}

// An idx file opened for reading: through zlib when the build has it (gzread reads gzip and
// plain files alike), else with stdio, plain files only (a gzip file is reported as such).
class IdxStream {
 public:
  IdxStream() = default;
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;
  ~IdxStream() {
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
    if (gz_ != nullptr) gzclose(gz_);
#else
    if (f_ != nullptr) std::fclose(f_);
#endif
  }

  Status Open(const std::string& path) {
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
    gz_ = gzopen(path.c_str(), "rb");
    if (gz_ == nullptr) return InternalError("cannot open " + path);
#else
    f_ = std::fopen(path.c_str(), "rb");
    if (f_ == nullptr) return InternalError("cannot open " + path);
    const int b0 = std::fgetc(f_), b1 = std::fgetc(f_);
    if (b0 == 0x1f && b1 == 0x8b) {
      return InternalError("cannot read " + path +
                           ": gzip-compressed, and this pjemu-trainer was built without zlib "
                           "(gunzip it, or rebuild with zlib)");
    }
    std::rewind(f_);
#endif
    return Status::Ok();
  }

  // Reads up to n bytes (n < 2^30); the count read, 0 at the end, < 0 on an error.
  int Read(void* dst, unsigned n) {
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
    return gzread(gz_, dst, n);
#else
    size_t got = std::fread(dst, 1, n, f_);
    return std::ferror(f_) ? -1 : static_cast<int>(got);
#endif
  }

  // Whether the stream ended cleanly (no gzip or I/O error).
  bool Clean() {
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
    int err = 0;
    gzerror(gz_, &err);
    return err == Z_OK || err == Z_STREAM_END;
#else
    return !std::ferror(f_);
#endif
  }

 private:
#if defined(PJEMU_TRAINER_HAVE_ZLIB)
  gzFile gz_ = nullptr;
#else
  std::FILE* f_ = nullptr;
#endif
};

// Reads exactly n bytes; false on a short read or a gzip error.
bool ReadExactly(IdxStream& f, void* dst, size_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    unsigned chunk = n > (1u << 30) ? (1u << 30) : static_cast<unsigned>(n);
    int got = f.Read(p, chunk);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

std::string Existing(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
#if !defined(PJEMU_TRAINER_HAVE_ZLIB)
  // Without zlib a plain copy beside the .gz is the one that can be read.
  if (fs::is_regular_file(fs::path(dir) / name, ec)) return dir + "/" + name;
#endif
  if (fs::is_regular_file(fs::path(dir) / (name + ".gz"), ec)) return dir + "/" + name + ".gz";
  return dir + "/" + name;
}

}  // namespace

Result<IdxFile> ReadIdx(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(Code::kNotFound, "idx file not found: " + path);
  }
  IdxStream f;
  RETURN_IF_ERROR(f.Open(path));
  uint8_t magic[4];
  if (!ReadExactly(f, magic, 4)) return Corrupt(path, "shorter than the 4-byte magic");
  if (magic[0] != 0 || magic[1] != 0) return Corrupt(path, "magic does not start with 0x0000");
  if (magic[2] != 0x08) return Corrupt(path, "element type is not ubyte (0x08)");
  int ndims = magic[3];
  if (ndims < 1 || ndims > 4)
    return Corrupt(path, "bad number of dimensions " + std::to_string(ndims));
  IdxFile out;
  int64_t total = 1;
  for (int i = 0; i < ndims; ++i) {
    uint8_t b[4];
    if (!ReadExactly(f, b, 4)) return Corrupt(path, "truncated header");
    int64_t d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    if (d <= 0 || d > (int64_t{1} << 28))
      return Corrupt(path, "bad dimension " + std::to_string(d));
    out.dims.push_back(d);
    total *= d;
    if (total > (int64_t{1} << 32)) return Corrupt(path, "too large");
  }
  out.data.resize(static_cast<size_t>(total));
  if (!ReadExactly(f, out.data.data(), out.data.size())) {
    return Corrupt(path, "truncated data (header promises " + std::to_string(total) + " bytes)");
  }
  uint8_t extra;
  if (f.Read(&extra, 1) != 0) return Corrupt(path, "trailing bytes after the data");
  if (!f.Clean()) return Corrupt(path, "gzip stream error");
  return out;
}

Result<Split> LoadSplit(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status(Code::kNotFound, "data folder not found: " + dir + " (--data-dir)");
  }
  ASSIGN_OR_RETURN(IdxFile images, ReadIdx(Existing(dir, prefix + "-images-idx3-ubyte")));
  ASSIGN_OR_RETURN(IdxFile labels, ReadIdx(Existing(dir, prefix + "-labels-idx1-ubyte")));
  const std::string where = dir + "/" + prefix;
  if (images.dims.size() != 3 || images.dims[1] != 28 || images.dims[2] != 28) {
    return Corrupt(where + "-images-idx3-ubyte", "expected N x 28 x 28 images");
  }
  if (labels.dims.size() != 1 || labels.dims[0] != images.dims[0]) {
    return Corrupt(where + "-labels-idx1-ubyte",
                   "label count does not match image count " + std::to_string(images.dims[0]));
  }
  for (uint8_t l : labels.data) {
    if (l > 9) return Corrupt(where + "-labels-idx1-ubyte", "label " + std::to_string(l) + " > 9");
  }
  const int64_t n = images.dims[0];
  Split s;
  s.images = torch::from_blob(images.data.data(), {n, 1, 28, 28}, torch::kUInt8).clone();
  s.labels = torch::from_blob(labels.data.data(), {n}, torch::kUInt8).to(torch::kInt64);
  return s;
}

torch::Tensor ToFloat(const torch::Tensor& images_u8) {
  return images_u8.to(torch::kFloat32).div_(255);
}

std::vector<int64_t> DistributedSamplerIndices(int64_t n, int world_size, int rank, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  torch::Tensor perm = torch::randperm(n, gen, torch::kInt64);
  const int64_t* p = perm.data_ptr<int64_t>();
  std::vector<int64_t> all(p, p + n);
  const int64_t num_samples = (n + world_size - 1) / world_size;  // ceil, drop_last=False
  const int64_t total = num_samples * world_size;
  for (int64_t i = 0; static_cast<int64_t>(all.size()) < total; ++i) all.push_back(all[i % n]);
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples));
  for (int64_t i = rank; i < total; i += world_size) mine.push_back(all[static_cast<size_t>(i)]);
  return mine;
}

std::vector<int64_t> UniqueShard(int64_t n, int world_size, int rank) {
  std::vector<int64_t> mine;
  for (int64_t i = rank; i < n; i += world_size) mine.push_back(i);
  return mine;
}

}  // namespace pjemu::trainer
