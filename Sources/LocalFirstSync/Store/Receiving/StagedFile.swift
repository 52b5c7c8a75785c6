#if canImport(Glibc)
import Glibc
#endif

/// A complete, fsynced, hash-verified file in the staging area with its
/// final mtime, waiting for `LibraryInstaller` to move it into the library.
/// Its staging name is private to it (see `StagingArea`).
public struct StagedFile: Sendable, CustomStringConvertible {
    public let fileHash: Hash256
    public let size: UInt64
    public let modificationTimeNs: Int64
    let staging: StagingArea
    /// Name inside the staging directory.
    let name: String

    init(fileHash: Hash256, size: UInt64, modificationTimeNs: Int64, staging: StagingArea, name: String) {
        self.fileHash = fileHash
        self.size = size
        self.modificationTimeNs = modificationTimeNs
        self.staging = staging
        self.name = name
    }

    var displayPath: String { StagingArea.displayPath(of: name) }

    public var description: String { "staged \(fileHash.shortHex) (\(size) bytes)" }

    /// Deletes the staged copy (an asset the engine gave up on). Already gone is fine.
    public func discard() throws(ReceiveError) {
        guard unlinkat(staging.directory.rawValue, name, 0) == 0 || errno == ENOENT else {
            throw .system(SystemError.current("unlink", path: displayPath))
        }
    }
}
