#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The on-disk form of the identity: exactly the 32 raw private-key bytes,
/// mode 0600. Raw bytes rather than text so nothing tempts anyone to paste it
/// anywhere; the public half and the device ID are derived on load.
enum PrivateKeyFile {
    static let length = 32

    enum CreateOutcome { case created, alreadyExists }

    /// Reads the key, refusing anything but a private regular file of the right size.
    static func read(at path: String) throws(DeviceIdentityError) -> [UInt8] {
        // O_NONBLOCK so a FIFO planted at the path cannot hang us; O_NOFOLLOW
        // so a symlink is refused rather than followed somewhere else.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let error = SystemError.current("open", path: path)
            switch error.errno {
            case ENOENT: throw .notFound(path: path)
            case ELOOP: throw .invalidKeyFile(path: path, reason: "it is a symbolic link")
            default: throw .system(error)
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .system(.current("fstat", path: path)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .invalidKeyFile(path: path, reason: "not a regular file") }
        guard info.st_mode & 0o077 == 0 else { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode & 0o7777)) }
        guard info.st_size == length else {
            throw .invalidKeyFile(path: path, reason: "expected \(length) bytes, found \(info.st_size)")
        }
        // One byte more than expected, to notice a file that grew since fstat.
        var buffer = [UInt8](repeating: 0, count: length + 1)
        var filled = 0
        while filled < buffer.count {
            let count = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress.map { $0 + filled }, raw.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                SecureBytes.wipe(&buffer)
                throw .system(.current("read", path: path))
            }
            if count == 0 { break }
            filled += count
        }
        guard filled == length else {
            SecureBytes.wipe(&buffer)
            throw .invalidKeyFile(path: path, reason: "expected \(length) bytes, read \(filled)")
        }
        buffer.removeLast()
        return buffer
    }

    /// Writes `contents` to a private temporary file beside `path`, fsyncs it,
    /// and hard-links it to `path` — which, unlike rename, fails when `path`
    /// already exists, so a key another process just created is never replaced.
    /// Filesystems without hard links fall back to rename.
    static func createExclusively(at path: String, contents: [UInt8]) throws(DeviceIdentityError) -> CreateOutcome {
        let directory = Self.directory(of: path)
        var nonce = SystemRandomNumberGenerator()
        let temporary = "\(path).tmp-\(getpid())-\(String(nonce.next() as UInt64, radix: 36))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(.current("open", path: temporary)) }
        defer { unlink(temporary) }
        do {
            defer { close(descriptor) }
            // The umask can only remove bits, but be explicit: exactly 0600.
            guard fchmod(descriptor, 0o600) == 0 else { throw .system(.current("fchmod", path: temporary)) }
            var written = 0
            while written < contents.count {
                let count = contents.withUnsafeBytes { raw in
                    write(descriptor, raw.baseAddress.map { $0 + written }, raw.count - written)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .system(.current("write", path: temporary))
                }
                written += count
            }
            guard fsync(descriptor) == 0 else { throw .system(.current("fsync", path: temporary)) }
        }
        if link(temporary, path) != 0 {
            let error = SystemError.current("link", path: path)
            switch error.errno {
            case EEXIST:
                return .alreadyExists
            case EPERM, EOPNOTSUPP, ENOSYS, EMLINK:
                guard rename(temporary, path) == 0 else { throw .system(.current("rename", path: path)) }
            default:
                throw .system(error)
            }
        }
        syncDirectory(directory)
        return .created
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Makes the new directory entry durable; best effort, as some filesystems refuse.
    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
