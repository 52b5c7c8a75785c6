import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

/// What the scan cache says a file held — its file hash — and the status under
/// which that was known (see `ScanCache.fileHashes(paths:)`).
package struct CachedFileHash: Hashable, Sendable {
    public var fileHash: Hash256
    public var stamp: FileStamp
    /// Nil when unknown or not to be trusted: then the file never counts as unchanged.
    public var changeTimeNs: Int64?

    /// True when `status` shows the file exactly as it was when its hash was known.
    public func isUnchanged(_ status: FileStatus) -> Bool {
        IndexedFile.isUnchanged(status, stamp: stamp, changeTimeNs: changeTimeNs)
    }
}
