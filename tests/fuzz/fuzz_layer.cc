// Fuzz target: image layer blobs as UnpackLayer reads them from a registry or an archive
// (any bytes: plain, gzip or zstd tar, sniffed from the first bytes).
// Invariants: no crash; a refusal is kInvalid (or kInternal for what the host refuses, such as
// mknod without CAP_MKNOD) and leaves no destination behind; nothing is ever written outside
// the destination: the sandbox around it holds exactly what the target put there.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "emulator/image/layer_unpack.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {

namespace {

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

}  // namespace

int FuzzLayer(const std::uint8_t* data, std::size_t size) {
  char name[] = "/tmp/pjemu-fuzz-layer-XXXXXX";
  if (::mkdtemp(name) == nullptr) return 0;
  const std::string root = name;
  const std::string sandbox = root + "/sandbox";
  const std::string blob = root + "/blob";
  const std::string dest = sandbox + "/layer";
  ::mkdir(sandbox.c_str(), 0755);
  {
    std::ofstream out(blob, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  image::UnpackLimits limits;
  limits.max_bytes = 4 << 20;
  limits.max_entries = 512;
  limits.max_path = 1024;
  auto result = image::UnpackLayer(blob, dest, {}, limits);
  if (result.ok()) {
    FUZZ_CHECK(result->blob_size == static_cast<std::int64_t>(size));
    FUZZ_CHECK(result->entries <= limits.max_entries);
    FUZZ_CHECK(Names(sandbox) == std::set<std::string>{"layer"});
  } else {
    Code code = result.status().code();
    FUZZ_CHECK(code == Code::kInvalid || code == Code::kInternal);
    FUZZ_CHECK(Names(sandbox).empty());
  }
  FUZZ_CHECK((Names(root) == std::set<std::string>{"blob", "sandbox"}));
  std::error_code ec;
  std::filesystem::remove_all(root, ec);  // never follows the layer's symlinks
  return 0;
}

}  // namespace pjemu::fuzz
