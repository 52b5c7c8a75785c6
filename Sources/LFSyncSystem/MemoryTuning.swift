internal import CLinux

/// Process-wide allocator settings for executables that move bulk data.
///
/// Chunk frames and Noise message batches are 64 KiB–16 MiB arrays. glibc
/// serves blocks that large with `mmap` and returns them with `munmap`, so
/// every frame costs a page fault per 4 KiB page and a zeroed page from the
/// kernel: measured at a quarter of the CPU time of an encrypted transfer.
/// Raising the thresholds keeps such blocks in the heap for reuse. Memory
/// stays bounded because every buffer size in lfsync is.
package enum MemoryTuning {
    /// Call once at process start, before other threads allocate.
    package static func keepLargeBuffersInHeap() {
        _ = mallopt(M_MMAP_THRESHOLD, 64 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 128 << 20)
    }
}
