// jemalloc's options for the programs that link it (`pjemu_malloc`, root CMakeLists.txt). jemalloc
// reads this global once, at its first allocation; MALLOC_CONF in the environment still overrides
// any option named here.
//
// thp:always: jemalloc asks the kernel for transparent huge pages on the memory it maps
// (madvise(MADV_HUGEPAGE), which the kernel's default "madvise" mode honours). The control
// plane's heap is hundreds of MiB of small JSON nodes and index entries visited in no order; on
// 4 KiB pages nearly every visit also walked the page tables. metadata_thp: the same for
// jemalloc's own bookkeeping. Measured in tools/bench/README.md (Huge pages).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf = "thp:always,metadata_thp:always";
}
