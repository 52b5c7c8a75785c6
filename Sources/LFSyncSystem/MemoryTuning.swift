internal import CLinux

/// Process-wide allocator settings for executables that move bulk data.
///
/// Chunk frames and Noise message batches are 64 KiB–16 MiB arrays. glibc
/// serves blocks that large with `mmap` and returns them with `munmap`, so
/// every frame costs a page fault per 4 KiB page and a zeroed page from the
/// kernel: measured at a quarter of the CPU time of an encrypted transfer.
/// Raising the thresholds keeps such blocks in the heap for reuse. Memory
/// stays bounded because every buffer size in lfsync is.
///
/// Two arenas, not glibc's default of eight per core: a chunk is allocated by
/// the thread that reads it off the socket and freed by the one that wrote it
/// to disk, so with an arena per thread each kept its own pool of chunk-sized
/// blocks. Receiving one 4 GiB file peaked at 113 MiB that way, 77 MiB with
/// two arenas, in a plain test (the performance targets in BENCHMARKS.md allow 100; `make bench` also
/// needed the smaller write queue of `SessionReceiver`), and the
/// many-small-files push was no slower (paired ratio 0.96 over 6 pairs).
package enum MemoryTuning {
    /// Call once at process start, before other threads allocate.
    package static func keepLargeBuffersInHeap() {
        _ = mallopt(M_MMAP_THRESHOLD, 64 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 128 << 20)
        _ = mallopt(M_ARENA_MAX, 2)
    }

    /// For a process that sits idle most of its life (`watch`): large blocks go back to
    /// `mmap`, and free memory is returned early, so what a burst of work allocated (a
    /// catch-up push of 200,000 files) does not stay resident for days as heap holes.
    /// The cost, page faults on each large frame, matters only while it sends, and a
    /// watch mostly sends little.
    package static func preferSmallResidentSize() {
        _ = mallopt(M_MMAP_THRESHOLD, 256 << 10)
        _ = mallopt(M_TRIM_THRESHOLD, 1 << 20)
    }

    /// Hands the heap's free pages back to the kernel (`malloc_trim`). With the trim
    /// threshold raised above, a long-running process that peaked once (a `watch`
    /// pass over 200,000 files) would otherwise keep that peak as its resident size
    /// while it sits idle.
    package static func releaseFreeMemory() {
        _ = malloc_trim(0)
    }
}
