#if canImport(Glibc)
import Glibc
#endif

/// An open, read-only file descriptor that closes itself.
///
/// Opened with `O_NOFOLLOW`, so a symlink swapped in after the directory walk
/// is refused rather than followed out of the library.
package final class ReadOnlyFile {
    package let path: String
    private let file: OwnedDescriptor
    private var descriptor: Int32 { file.rawValue }

    /// Below this size a file is read in one or two calls: asking the kernel
    /// for a larger read-ahead would be one more system call per file.
    package static let sequentialAdviceThreshold: UInt64 = 256 << 10

    /// - Parameter nonBlocking: open with `O_NONBLOCK`, so that opening a FIFO
    ///   planted under a photo's name returns at once instead of hanging.
    /// - Parameter size: the size the caller expects, when it knows one: a file
    ///   smaller than `sequentialAdviceThreshold` gets no read-ahead advice.
    package init(path: String, nonBlocking: Bool = false, size: UInt64? = nil) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0))
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        self.path = path
        file = OwnedDescriptor(taking: fd)
        if (size ?? .max) >= Self.sequentialAdviceThreshold {
            _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        }
    }

    package func status() throws(SystemError) -> FileStatus {
        try file.status(path)
    }

    /// Fills as much of `buffer` as the file has left; 0 means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
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
    package func read(atOffset offset: UInt64, count: Int) throws(SystemError) -> [UInt8] {
        // Never an uninitialised array of capacity 0: it would write into the shared empty-array singleton.
        guard count > 0 else { return [] }
        var failure: SystemError?
        // Uninitialised storage: zero-filling a chunk only for `pread` to overwrite it cost the
        // sender a memset of every byte it sends. Only the bytes read become the array.
        let bytes = [UInt8](unsafeUninitializedCapacity: max(count, 0)) { buffer, initialized in
            do throws(SystemError) {
                initialized = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset, path)
            } catch {
                initialized = 0
                failure = error
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
