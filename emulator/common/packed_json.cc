#include "emulator/common/packed_json.h"

#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace pjemu {
namespace {

// MessagePack (nlohmann's encoder: twice as fast to write and a quarter faster to read as JSON
// text, no UTF-8 check to fail), then zstd at its first fast level: a value is packed in about
// 3 us (an Event) to 9 us (a Pod), to between a half (an Event) and a third (a Pod) of its JSON
// text.
constexpr int kLevel = -1;

struct Contexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  ~Contexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

// One pair per thread: reused contexts save zstd's setup on every small value.
Contexts& ThreadContexts() {
  thread_local Contexts contexts;
  return contexts;
}

[[noreturn]] void Corrupt(const char* what, const char* why) {
  std::fprintf(stderr, "pjemu: %s cannot be decoded (%s)\n", what, why);
  std::abort();
}

}  // namespace

std::string PackJson(const Json& value) {
  std::vector<std::uint8_t> bytes = Json::to_msgpack(value);
  std::string packed(ZSTD_compressBound(bytes.size()), '\0');
  std::size_t n = ZSTD_compressCCtx(ThreadContexts().compress, packed.data(), packed.size(),
                                    bytes.data(), bytes.size(), kLevel);
  if (ZSTD_isError(n)) return "";
  packed.resize(n);
  packed.shrink_to_fit();
  return packed;
}

Json UnpackJson(std::string_view packed, const char* what) {
  unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) Corrupt(what, "frame");
  std::string bytes(size, '\0');
  std::size_t got = ZSTD_decompressDCtx(ThreadContexts().decompress, bytes.data(), bytes.size(),
                                        packed.data(), packed.size());
  if (ZSTD_isError(got) || got != size) Corrupt(what, ZSTD_getErrorName(got));
  Json tree = Json::from_msgpack(bytes, true, false);
  if (tree.is_discarded()) Corrupt(what, "MessagePack");
  return tree;
}

}  // namespace pjemu
