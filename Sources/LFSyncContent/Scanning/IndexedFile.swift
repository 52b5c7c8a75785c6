import LFSyncSystem

/// A scanned file as the Store keeps it: its manifest plus the inode the
/// manifest does not carry. The size and mtime come from the manifest itself,
/// so the stamp always describes the bytes that were hashed.
public struct IndexedFile: Hashable, Sendable {
    public var manifest: FileManifest
    public var inode: UInt64
    /// The Live Photo identifier found in the file's metadata, if any.
    public var contentIdentifier: String?
    /// The file's ctime when the manifest was known to describe it; nil when
    /// unknown or not to be trusted (a scan cache entry without it never matches).
    public var changeTimeNs: Int64?

    public init(manifest: FileManifest, inode: UInt64, contentIdentifier: String? = nil, changeTimeNs: Int64? = nil) {
        self.manifest = manifest
        self.inode = inode
        self.contentIdentifier = contentIdentifier
        self.changeTimeNs = changeTimeNs
    }

    public var path: RelativePath { manifest.path }

    package var stamp: FileStamp {
        FileStamp(size: manifest.size, modificationTimeNs: manifest.modificationTimeNs, inode: inode)
    }

    /// True when `status` shows the file exactly as it was when this manifest
    /// described it: same size, mtime, inode and ctime.
    package func isUnchanged(_ status: FileStatus) -> Bool {
        Self.isUnchanged(status, stamp: stamp, changeTimeNs: changeTimeNs)
    }

    /// Whether `status` shows a file with this stamp and ctime (never, without a ctime).
    package static func isUnchanged(_ status: FileStatus, stamp: FileStamp, changeTimeNs: Int64?) -> Bool {
        guard let changeTimeNs else { return false }
        return stamp == FileStamp(status) && status.changeTimeNs == changeTimeNs
    }
}
