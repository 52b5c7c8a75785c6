#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// Everything that can go wrong while landing an incoming file. Paths in the
/// messages are library-relative and escaped: they may have come from a peer.
package enum ReceiveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A path from the wire failed `LibraryPath.validate`.
    case pathRejected(ReceivePathError)
    /// A component of the path is a symbolic link; nothing was written through it.
    case symlinkInPath(String)
    /// A component of the path exists but is not a directory.
    case notADirectory(String)
    /// The path leads into lfsync's own state directory (by name or by inode).
    case reservedPath(String)
    /// A manifest whose chunk list cannot describe its file.
    case invalidManifest(String)
    case chunkIndexOutOfRange(index: Int, chunkCount: Int)
    case chunkLengthMismatch(index: Int, expected: UInt32, actual: Int)
    /// The bytes offered for chunk `index` do not hash to the manifest's chunk hash.
    case chunkHashMismatch(index: Int)
    /// `verify()` was called before every chunk was verified.
    case missingChunks(fileHash: Hash256, missing: Int)
    /// Every chunk was verified, but the staged file is not the manifest's size (cut
    /// short or grown by something outside lfsync): it was deleted.
    case stagedFileWrongSize(fileHash: Hash256, size: UInt64, expected: UInt64)
    /// Another transfer of the same content finished and took the shared
    /// partial (see `StagingArea`); open the file again to continue.
    case partialTaken(fileHash: Hash256)
    /// The file was already finished; it can no longer be written.
    case alreadyFinished(fileHash: Hash256)
    /// A staged file is no longer in the staging area (already installed or
    /// discarded), or its name no longer led to the file that was verified.
    case stagedFileMissing(fileHash: Hash256)
    /// An offer needs more room than the library's file system has free,
    /// once `reserved` bytes are kept free for everything else.
    case insufficientSpace(needed: UInt64, available: UInt64, reserved: UInt64 = 0)
    /// Both the name and every conflict name for it hold other content.
    case destinationOccupied(String)
    case system(SystemError)
    /// `.lfsync` or its staging directory belongs to another user: whoever owns
    /// it could read or replace incoming files.
    case unsafeStaging(path: String, owner: UInt32, user: UInt32)
    /// The receiving library could not be opened.
    case libraryUnavailable(String)
    /// Installing an asset failed and not all of its already-placed files
    /// could be moved back to staging: `installed` are still in the library.
    indirect case partiallyInstalled(installed: [String], cause: ReceiveError)

    package var description: String {
        switch self {
        case let .pathRejected(error): error.description
        case let .symlinkInPath(path): "refused to write through \"\(path)\": it is a symbolic link"
        case let .notADirectory(path): "cannot write below \"\(path)\": it is not a directory"
        case let .reservedPath(path): "refused \"\(path)\": it is lfsync's own state directory"
        case let .invalidManifest(reason): "invalid file manifest: \(reason)"
        case let .chunkIndexOutOfRange(index, count): "chunk \(index) does not exist (the file has \(count))"
        case let .chunkLengthMismatch(index, expected, actual):
            "chunk \(index) is \(actual) bytes, the manifest says \(expected)"
        case let .chunkHashMismatch(index): "chunk \(index) does not match its hash; discarded"
        case let .missingChunks(hash, missing): "file \(hash.shortHex) still lacks \(missing) chunk(s)"
        case let .stagedFileWrongSize(hash, size, expected):
            "the staged file \(hash.shortHex) is \(size) bytes, not \(expected); it was deleted"
        case let .partialTaken(hash): "the partial file \(hash.shortHex) was completed by another transfer; reopen it"
        case let .alreadyFinished(hash): "file \(hash.shortHex) is already finished"
        case let .stagedFileMissing(hash): "the staged file \(hash.shortHex) is no longer in the staging area"
        case let .insufficientSpace(needed, available, reserved) where reserved > 0:
            "not enough free space: needs \(ByteCountText.format(needed)), \(ByteCountText.format(available)) available of which \(ByteCountText.format(reserved)) are kept free"
        case let .insufficientSpace(needed, available, _):
            "not enough free space: needs \(ByteCountText.format(needed)), \(ByteCountText.format(available)) available"
        case let .destinationOccupied(path): "cannot store \"\(path)\": the name and its conflict names hold other files"
        case let .system(error) where error.errno == ENOSPC:
            "the receiving disk is full (no space left while writing \(error.path.map { PrintablePath.escape($0) } ?? "a received file"))"
        case let .system(error): error.description
        case let .unsafeStaging(path, owner, user):
            "refused to receive into \"\(path)\": it belongs to another user (uid \(owner), not \(user)), who could read or replace incoming files; remove it, or give it to this user"
        case let .libraryUnavailable(reason): "cannot open the library: \(reason)"
        case let .partiallyInstalled(installed, cause):
            "\(cause); these files of the asset could not be moved back: \(installed.joined(separator: ", "))"
        }
    }
}

extension ReceiveError {
    /// Runs a step made of system calls, reporting its failure as `.system`.
    package static func system<T>(_ body: () throws(SystemError) -> T) throws(ReceiveError) -> T {
        do { return try body() } catch { throw .system(error) }
    }
}
