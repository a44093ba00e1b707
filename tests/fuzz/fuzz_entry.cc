// The libFuzzer entry of one fuzz binary: PJEMU_FUZZ_FUNCTION names the target (CMake sets it).
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
void FuzzFail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", file, line, what);
  std::abort();
}
}  // namespace pjemu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pjemu::fuzz::PJEMU_FUZZ_FUNCTION(data, size);
}
