// The libFuzzer targets of pjemu (hostile input). Each target is a plain function so
// that one binary per target (fuzz_entry.cc, built with PJEMU_FUZZ=ON and clang) and the
// replay unit test (fuzz_replay_test.cc, every build) run the same code. A target returns 0;
// a crash, a sanitizer report, an escaping exception or a failed FUZZ_CHECK is a finding.
// Every finding is kept under tests/fuzz/regressions/<target>/ and replayed by ctest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pjemu::fuzz {

// Reports a broken invariant: abort() in a fuzz binary, an exception in the replay test.
[[noreturn]] void FuzzFail(const char* file, int line, const char* what);

int FuzzManifest(const std::uint8_t* data, std::size_t size);   // manifest loader
int FuzzJsonCodec(const std::uint8_t* data, std::size_t size);  // request-body decoding
int FuzzSelector(const std::uint8_t* data, std::size_t size);   // label and field selectors
int FuzzQuantity(const std::uint8_t* data, std::size_t size);   // resource quantities
int FuzzPatch(const std::uint8_t* data, std::size_t size);      // merge/JSON patch in the store
int FuzzRouter(const std::uint8_t* data, std::size_t size);     // HTTP request router and paths
int FuzzSpdy(const std::uint8_t* data, std::size_t size);       // SPDY/3.1 exec and port-forward
int FuzzTfEvents(const std::uint8_t* data, std::size_t size);   // TensorBoard event files
int FuzzApply(const std::uint8_t* data, std::size_t size);      // server-side apply, fieldsV1
int FuzzLayer(const std::uint8_t* data, std::size_t size);      // image layer blobs (unpack)

struct FuzzTarget {
  const char* name;  // "manifest": corpus tests/fuzz/corpus/manifest, binary fuzz_manifest
  int (*run)(const std::uint8_t*, std::size_t);
};
inline constexpr FuzzTarget kFuzzTargets[] = {
    {"manifest", FuzzManifest}, {"json_codec", FuzzJsonCodec}, {"selector", FuzzSelector},
    {"quantity", FuzzQuantity}, {"patch", FuzzPatch},          {"router", FuzzRouter},
    {"spdy", FuzzSpdy},         {"tfevents", FuzzTfEvents},  {"apply", FuzzApply},
    {"layer", FuzzLayer},
};

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace pjemu::fuzz

#define FUZZ_CHECK(cond)                                             \
  do {                                                               \
    if (!(cond)) ::pjemu::fuzz::FuzzFail(__FILE__, __LINE__, #cond); \
  } while (0)
