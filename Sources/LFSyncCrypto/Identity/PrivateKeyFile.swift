#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import LFSyncSystem

/// The on-disk form of the identity: exactly the 32 raw private-key bytes,
/// mode 0600. Raw bytes rather than text so nothing tempts anyone to paste it
/// anywhere; the public half and the device ID are derived on load.
enum PrivateKeyFile {
    package static let length = 32

    package enum CreateOutcome { case created, alreadyExists }

    /// Reads the key, refusing anything but a private regular file of the right size.
    package static func read(at path: String) throws(DeviceIdentityError) -> [UInt8] {
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

    /// Writes `contents` durably with mode 0600 (`DurableFile`), linking it
    /// into place — which, unlike rename, fails when `path` already exists, so
    /// a key another process just created is never replaced.
    package static func createExclusively(at path: String, contents: [UInt8]) throws(DeviceIdentityError) -> CreateOutcome {
        let outcome: DurableFile.Outcome
        do { outcome = try DurableFile.write(contents, to: path, mode: 0o600, placement: .keepExisting) } catch {
            throw .system(error)
        }
        switch outcome {
        case .written: return .created
        case .alreadyExists: return .alreadyExists
        }
    }
}
