#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncSystem
import LFSyncStore

/// `<library>/.lfsync/lock`, held (`flock`, exclusive) by the one process
/// that receives into a library.
///
/// Two receivers in one library would share its staging area: each recovers
/// the other's finished-but-not-installed files at start-up and each takes
/// partials the other is writing. The lock lives in the library rather than in
/// a state home so that it also holds between processes of different homes
/// (users). It is released when this object goes, or when the process dies.
package final class LibraryLock: Sendable {
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Another process holds the lock: it is receiving into this library now.
        case held(lockPath: String)
        /// The lock file could not be opened (a symlink where `.lfsync` should be, permissions…).
        case unavailable(ReceiveError)

        package var description: String {
            switch self {
            case let .held(path): "another lfsync process is receiving into this library (it holds \(path))"
            case let .unavailable(error): "cannot take the library's lock: \(error)"
            }
        }
    }

    package static let fileName = "lock"
    private let descriptor: OwnedDescriptor

    /// Takes the lock at once or fails: a second receiver should stop, not wait
    /// behind a `serve` that may run for months. `.lfsync` is created (0700) if
    /// missing and refused if it is a symlink, as for the staging area.
    package init(libraryPath: String) throws(Failure) {
        let displayPath = libraryPath + "/" + LibraryLayout.stateDirectoryName + "/" + Self.fileName
        let state: OwnedDescriptor
        do {
            let library = try LibraryDirectory(path: libraryPath)
            (state, _) = try library.openChildDirectory(
                of: library.root, named: LibraryLayout.stateDirectoryName, create: 0o700,
                displayPath: LibraryLayout.stateDirectoryName)
        } catch {
            throw .unavailable(error)
        }
        let fd = openat(state.rawValue, Self.fileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw .unavailable(.system(.current("open", path: displayPath))) }
        // Owned from here on: closing it (when this object goes) releases the lock.
        let lock = OwnedDescriptor(taking: fd)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK { throw .held(lockPath: displayPath) }
            throw .unavailable(.system(.current("flock", path: displayPath)))
        }
        descriptor = lock
    }
}
