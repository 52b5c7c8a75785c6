#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe that interrupts the loop's `poll` when a job arrives.
struct WakePipe: Sendable {
    package let readFD: Int32
    package let writeFD: Int32

    package init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    /// A full pipe already means "wake up", so a failed write is fine.
    package static func signal(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    package static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    package func close() {
        _ = Glibc.close(readFD)
        _ = Glibc.close(writeFD)
    }
}
