// jemalloc's options for the programs that link it (`pjemu_malloc`, root CMakeLists.txt). jemalloc
// reads this global once, at its first allocation; MALLOC_CONF in the environment still overrides
// any option named here.
//
// thp:never, metadata_thp:disabled: 4 KiB pages. The control plane's heap is hundreds of MiB of
// small JSON nodes, grown fast; asking the kernel for transparent huge pages
// (madvise(MADV_HUGEPAGE)) made each first touch of a 2 MiB extent wait for a whole huge page,
// which on a virtual machine means memory its host had not backed yet (about 11 ms per 2 MiB on
// the project's VM, against about 1 ms for the same memory in 4 KiB pages). Measured in
// tools/bench/README.md (Huge pages); `MALLOC_CONF=thp:always,metadata_thp:always` brings them
// back.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf = "thp:never,metadata_thp:disabled";
}
