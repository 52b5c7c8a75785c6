import Foundation

/// An exclusive `flock` on the state home, so overlapping cron runs don't
/// collide: the second one fails at once instead of waiting.
final class ProcessLock {
    private let descriptor: Int32

    init(at url: URL) throws {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandFailure(message: "cannot open the lock \(url.path): \(String(cString: strerror(errno)))", exitCode: .ioError) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw CommandFailure(message: "another lfsync run holds \(url.path); try again later", exitCode: .temporaryFailure)
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
