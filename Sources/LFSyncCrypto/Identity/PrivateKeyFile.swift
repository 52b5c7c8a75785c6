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
        let file = OwnedDescriptor(taking: descriptor)
        let status: FileStatus
        do { status = try file.status(path) } catch { throw .system(error) }
        guard status.kind == .regular else { throw .invalidKeyFile(path: path, reason: "not a regular file") }
        guard status.permissions & 0o077 == 0 else { throw .insecurePermissions(path: path, mode: status.permissions & 0o7777) }
        guard status.size == UInt64(length) else {
            throw .invalidKeyFile(path: path, reason: "expected \(length) bytes, found \(status.size)")
        }
        // One byte more than expected, to notice a file that grew since fstat.
        var buffer = [UInt8](repeating: 0, count: length + 1)
        let filled: Result<Int, SystemError> = buffer.withUnsafeMutableBytes { raw in
            do throws(SystemError) { return .success(try file.read(into: raw, at: 0, path)) } catch { return .failure(error) }
        }
        guard case let .success(count) = filled, count == length else {
            SecureBytes.wipe(&buffer)
            switch filled {
            case let .failure(error): throw .system(error)
            case let .success(count): throw .invalidKeyFile(path: path, reason: "expected \(length) bytes, read \(count)")
            }
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
