// Linux and glibc interfaces that Swift's Glibc module leaves out (malloc
// tuning, early writeback, file cloning, pseudo-terminals). Header-only: nothing to link beyond libc.
#include <malloc.h>
#include <sys/types.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

// glibc declares these only under _GNU_SOURCE, which the Glibc module is built
// without; the prototypes are glibc's own.
extern int sync_file_range(int fd, __off64_t offset, __off64_t nbytes, unsigned int flags);
extern int syncfs(int fd);
extern ssize_t copy_file_range(int fd_in, __off64_t *off_in, int fd_out, __off64_t *off_out, size_t len, unsigned int flags);

// Pseudo-terminals, declared only under _XOPEN_SOURCE / _GNU_SOURCE: the CLI tests run
// `lfsync serve` on one to see the questions it asks a person.
extern int posix_openpt(int flags);
extern int grantpt(int fd);
extern int unlockpt(int fd);
extern int ptsname_r(int fd, char *buf, size_t buflen);

/// Starts writeback of a byte range without waiting for it (SYNC_FILE_RANGE_WRITE),
/// so a later fsync finds little left to flush.
static inline int lfsync_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, 2 /* SYNC_FILE_RANGE_WRITE */);
}

/// Makes `destination` share `source`'s extents (a reflink: btrfs, XFS, bcachefs...).
/// ioctl is variadic, which Swift cannot call.
static inline int lfsync_clone_file(int destination, int source) {
    return ioctl(destination, FICLONE, source);
}

/// syncfs(2): flushes the file system holding `fd` (one barrier for many files).
static inline int lfsync_syncfs(int fd) {
    return syncfs(fd);
}
