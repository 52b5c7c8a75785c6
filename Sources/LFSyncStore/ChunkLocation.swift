import LFSyncContent

/// Where a chunk's bytes can be found in the library: a hint, not a promise.
/// The file may have changed since it was indexed; compare `stamp` with a
/// fresh `fstat` and always re-verify the chunk's hash after reading.
package struct ChunkLocation: Hashable, Sendable {
    /// Library-relative path of the file holding the chunk.
    public var path: RelativePath
    public var offset: UInt64
    public var length: UInt32
    /// The file's stamp when it was indexed.
    public var stamp: FileStamp

    public init(path: RelativePath, offset: UInt64, length: UInt32, stamp: FileStamp) {
        self.path = path
        self.offset = offset
        self.length = length
        self.stamp = stamp
    }
}

extension SQLiteRow {
    /// A path column, read back with its bytes exactly as stored.
    package func relativePath(at column: Int32) -> RelativePath? {
        text(at: column).map { RelativePath($0) }
    }
}
