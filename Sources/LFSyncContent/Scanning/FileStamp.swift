import LFSyncSystem

/// What says "this file has not changed since we looked": size, nanosecond
/// mtime and inode. The scan cache trusts a manifest only under an identical
/// stamp, and the chunk index records it so a reader can `fstat` before it
/// bothers to read and re-hash.
package struct FileStamp: Hashable, Sendable, Codable {
    public var size: UInt64
    public var modificationTimeNs: Int64
    public var inode: UInt64

    public init(size: UInt64, modificationTimeNs: Int64, inode: UInt64) {
        self.size = size
        self.modificationTimeNs = modificationTimeNs
        self.inode = inode
    }

    public init(_ status: FileStatus) {
        self.init(size: status.size, modificationTimeNs: status.modificationTimeNs, inode: status.inode)
    }
}
