import LFSyncContent
import LFSyncStore

/// What the installer did with one file of an asset.
public enum InstalledFile: Hashable, Sendable, CustomStringConvertible {
    /// Moved into place under the name the peer sent.
    case installed(LibraryPath)
    /// A file with identical content (size and BLAKE2b-256) was already at
    /// this path — the name sent, or an earlier identical conflict copy; the
    /// staged copy was dropped.
    case alreadyPresent(LibraryPath)
    /// A different file had the name; ours was stored beside it, the
    /// existing one left untouched.
    case conflictRenamed(original: LibraryPath, storedAs: LibraryPath)

    /// Where the content now is in the library.
    package var storedPath: LibraryPath {
        switch self {
        case let .installed(path), let .alreadyPresent(path): path
        case let .conflictRenamed(_, storedAs): storedAs
        }
    }

    public var description: String {
        switch self {
        case let .installed(path): "installed \(path)"
        case let .alreadyPresent(path): "already present at \(path)"
        case let .conflictRenamed(original, storedAs): "\(original) holds other content; stored as \(storedAs)"
        }
    }
}
