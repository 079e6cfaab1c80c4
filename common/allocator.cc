// Linked into the programs (staved, the benchmarks) when they use jemalloc; see
// CMakeLists.txt, "The allocator".
//
// jemalloc reads this at its first allocation. Transparent huge pages for its extents: the
// engine's hash tables (aggregate groups, state write buffers) are read at random, and with
// 4 KiB pages nearly every such read also misses the TLB; on a virtual machine each miss
// costs a nested page walk. Background threads return freed memory to the system off the
// engine's threads.
//
// No oversize arena: by default jemalloc serves requests of 8 MiB and more from an arena
// that returns them to the system as soon as they are freed. An epoch's batch, a growing
// hash table or a column of a large chunk is such a request, made anew every epoch, so each
// epoch the kernel zeroed those pages again when they were first written. In the ordinary
// arenas they are kept for reuse until the usual decay returns them (docs/decisions.md).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf =
    "thp:always,metadata_thp:auto,background_thread:true,oversize_threshold:0";
}
