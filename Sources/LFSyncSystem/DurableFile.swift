#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a small file whole, so that a crash or a full disk leaves either the
/// old file or the new one at the path — never an empty or half-written one
/// that makes every later run fail.
///
/// The bytes go to a temporary file beside the path, created with `O_EXCL`
/// under a name nobody can predict (so nothing planted there, and no other
/// writer, is written through), with exactly the requested mode before any
/// byte lands; it is fsynced, put in place, and the directory is fsynced so
/// the new entry survives power loss too. Shared by the identity key and the
/// CLI's `config.json`.
package enum DurableFile {
    /// What happens when something already exists at the path.
    package enum Placement: Sendable {
        /// rename(2): the old file is replaced atomically.
        case replace
        /// link(2): an existing file is kept and `.alreadyExists` returned, so
        /// a file another process just created is never replaced. Filesystems
        /// without hard links fall back to check-then-rename.
        case keepExisting
    }

    package enum Outcome: Sendable, Equatable { case written, alreadyExists }

    /// The prefix of every temporary name, after the file's own name.
    package static let temporaryMarker = ".tmp-"

    @discardableResult
    package static func write(
        _ contents: [UInt8], to path: String, mode: mode_t = 0o600, placement: Placement = .replace
    ) throws(SystemError) -> Outcome {
        var random = SystemRandomNumberGenerator()
        let temporary = "\(path)\(temporaryMarker)\(getpid())-\(String(random.next() as UInt64, radix: 36))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .current("open", path: temporary) }
        // Whatever happens below, the temporary name does not outlive this call.
        defer { unlink(temporary) }
        do {
            let file = OwnedDescriptor(taking: descriptor)
            // The umask can only remove bits, but be explicit: exactly `mode`.
            guard fchmod(file.rawValue, mode) == 0 else { throw SystemError.current("fchmod", path: temporary) }
            try file.write(contents[...], at: 0, temporary)
            try file.sync(temporary)
        }
        switch placement {
        case .replace:
            guard rename(temporary, path) == 0 else { throw .current("rename", path: path) }
        case .keepExisting:
            if link(temporary, path) != 0 {
                let error = SystemError.current("link", path: path)
                switch error.errno {
                case EEXIST:
                    return .alreadyExists
                case EPERM, EOPNOTSUPP, ENOSYS, EMLINK:
                    // No hard links here (vfat, some network mounts): check, then rename — the
                    // same last resort as `NoReplaceRename`. Only a create racing this very
                    // moment could still be replaced.
                    var existing = stat()
                    if lstat(path, &existing) == 0 { return .alreadyExists }
                    guard rename(temporary, path) == 0 else { throw .current("rename", path: path) }
                default:
                    throw error
                }
            }
        }
        syncDirectory(of: path)
        return .written
    }

    /// Makes the new directory entry durable; best effort, as some filesystems refuse.
    private static func syncDirectory(of path: String) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        try? OwnedDescriptor(taking: descriptor).sync(directory)
    }
}
