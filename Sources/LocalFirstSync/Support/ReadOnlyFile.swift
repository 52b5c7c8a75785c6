#if canImport(Glibc)
import Glibc
#endif

/// An open, read-only file descriptor that closes itself.
///
/// Opened with `O_NOFOLLOW`, so a symlink swapped in after the directory walk
/// is refused rather than followed out of the library.
public final class ReadOnlyFile {
    public let path: String
    private let descriptor: Int32

    /// - Parameter nonBlocking: open with `O_NONBLOCK`, so that opening a FIFO
    ///   planted under a photo's name returns at once instead of hanging.
    public init(path: String, nonBlocking: Bool = false) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0))
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        self.path = path
        descriptor = fd
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    deinit {
        close(descriptor)
    }

    public func status() throws(SystemError) -> FileStatus {
        var raw = stat()
        guard fstat(descriptor, &raw) == 0 else { throw SystemError.current("fstat", path: path) }
        return FileStatus(raw)
    }

    /// Fills as much of `buffer` as the file has left; 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let result = Glibc.read(descriptor, base + filled, buffer.count - filled)
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("read", path: path)
            }
            if result == 0 { break }
            filled += result
        }
        return filled
    }

    /// Reads up to `count` bytes at `offset` without moving the file position.
    public func read(atOffset offset: UInt64, count: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        let failure: SystemError? = bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            while filled < count {
                let result = pread(descriptor, base + filled, count - filled, off_t(offset) + off_t(filled))
                if result < 0 {
                    if errno == EINTR { continue }
                    return SystemError.current("pread", path: path)
                }
                if result == 0 { break }
                filled += result
            }
            return nil
        }
        if let failure { throw failure }
        bytes.removeSubrange(filled...)
        return bytes
    }
}
