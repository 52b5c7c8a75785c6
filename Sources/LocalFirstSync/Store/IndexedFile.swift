/// A scanned file as the Store keeps it: its manifest plus the inode the
/// manifest does not carry. The size and mtime come from the manifest itself,
/// so the stamp always describes the bytes that were hashed.
public struct IndexedFile: Hashable, Sendable {
    public var manifest: FileManifest
    public var inode: UInt64
    /// The Live Photo identifier found in the file's metadata, if any.
    public var contentIdentifier: String?

    public init(manifest: FileManifest, inode: UInt64, contentIdentifier: String? = nil) {
        self.manifest = manifest
        self.inode = inode
        self.contentIdentifier = contentIdentifier
    }

    public var path: String { manifest.path }

    public var stamp: FileStamp {
        FileStamp(size: manifest.size, modificationTimeNs: manifest.modificationTimeNs, inode: inode)
    }
}
