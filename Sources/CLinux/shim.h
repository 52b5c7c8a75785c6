// Linux and glibc interfaces that Swift's Glibc module leaves out (malloc
// tuning, early writeback). Header-only: nothing to link beyond libc.
#include <malloc.h>
#include <sys/types.h>

// glibc declares this only under _GNU_SOURCE, which the Glibc module is built
// without; the prototype is glibc's own.
extern int sync_file_range(int fd, __off64_t offset, __off64_t nbytes, unsigned int flags);

/// Starts writeback of a byte range without waiting for it (SYNC_FILE_RANGE_WRITE),
/// so a later fsync finds little left to flush.
static inline int lfsync_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, 2 /* SYNC_FILE_RANGE_WRITE */);
}
