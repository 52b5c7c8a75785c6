import LFSyncCrypto
import LFSyncSystem

/// Everything a peer needs to know about one file to decide which of its bytes
/// it lacks: where it goes, how big it is, and how it is cut.
public struct FileManifest: Hashable, Sendable, Codable {
    /// Library-relative, `/`-separated, compared by bytes. Never trusted for
    /// writes without the receiver's own path checks.
    public var path: RelativePath
    public var size: UInt64
    /// Modification time in nanoseconds since 1970, preserved on the receiving side.
    public var modificationTimeNs: Int64
    /// The file's hash, made from its chunk list (`ContentHash.file`): set with the
    /// chunks, never on its own, so that no manifest can claim a file hash its
    /// chunks do not have.
    public private(set) var fileHash: Hash256
    public var chunks: [ChunkRef] {
        didSet { fileHash = ContentHash.file(chunks: chunks) }
    }
    /// The file's permission bits (`st_mode & 0o7777`) where it was read. Sent with each
    /// placement so the receiver can give a new file the source's bits masked by its own
    /// umask, as rsync does without `--perms`; not part of the content (nor of the canonical
    /// encoding the scan cache keeps: a scan takes them from `lstat` every time).
    public var permissions: UInt32

    public init(path: RelativePath, size: UInt64, modificationTimeNs: Int64, chunks: [ChunkRef], permissions: UInt32 = FileManifest.defaultPermissions) {
        self.init(path: path, size: size, modificationTimeNs: modificationTimeNs, derivedFileHash: ContentHash.file(chunks: chunks),
                  chunks: chunks, permissions: permissions)
    }

    /// For a caller that has just made `fileHash` from these very chunks (the
    /// chunker), or kept it beside them itself (the scan cache): one hash of the
    /// chunk list fewer per file. Debug builds check the claim.
    package init(path: RelativePath, size: UInt64, modificationTimeNs: Int64, derivedFileHash: Hash256, chunks: [ChunkRef],
                 permissions: UInt32 = FileManifest.defaultPermissions) {
        assert(derivedFileHash == ContentHash.file(chunks: chunks), "a file hash that is not its chunk list's")
        self.path = path
        self.size = size
        self.modificationTimeNs = modificationTimeNs
        self.fileHash = derivedFileHash
        self.chunks = chunks
        self.permissions = permissions & 0o7777
    }

    /// What a file that never was one (generated content, a test) is said to have: `rw-r--r--`.
    public static let defaultPermissions: UInt32 = 0o644

    /// The manifest of bytes held in memory, cut by the real chunker: for
    /// content that never was a file (tests, generated offers).
    package init(path: RelativePath, contents: [UInt8], modificationTimeNs: Int64 = 0, configuration: ChunkerConfiguration = .default) {
        var hasher = ChunkingHasher(configuration: configuration)
        contents.withUnsafeBytes { hasher.update($0) }
        let (fileHash, chunks) = hasher.finish()
        self.init(path: path, size: UInt64(contents.count), modificationTimeNs: modificationTimeNs, derivedFileHash: fileHash, chunks: chunks)
    }
}

extension FileManifest {
    /// Hard limits applied when decoding a manifest from bytes we did not produce.
    public enum Limits {
        public static let maxPathBytes = 4096
        /// 4 Mi chunks of at least 64 KiB each: files up to 256 GiB.
        public static let maxChunkCount = 1 << 22
    }

    /// 2 since file hashes are made from chunk lists (version 1 held hashes of the
    /// whole file, which no longer name anything): an old cache row fails to decode and
    /// the file is hashed again.
    package static let encodingVersion: UInt8 = 2

    /// Canonical binary form (PROTOCOL.md, "File manifest").
    package func encode(into writer: inout ByteWriter) {
        writer.write(Self.encodingVersion)
        writer.writeString(path.string)
        writer.write(size)
        writer.write(modificationTimeNs)
        writer.write(fileHash)
        writer.write(UInt32(chunks.count))
        for chunk in chunks {
            writer.write(chunk.length)
            writer.write(chunk.hash)
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 64 + path.utf8Count + chunks.count * 36)
        encode(into: &writer)
        return writer.bytes
    }

    /// Decodes and validates: chunk lengths must be non-zero, at most the
    /// chunker's maximum, and add up to `size`.
    package init(from reader: inout ByteReader) throws(ByteReaderError) {
        let version = try reader.readUInt8()
        guard version == Self.encodingVersion else { throw .invalidValue("file manifest version \(version)") }
        path = RelativePath(try reader.readString(limit: Limits.maxPathBytes))
        size = try reader.readUInt64()
        modificationTimeNs = try reader.readInt64()
        // Kept beside the chunks by `encode`, in this device's own cache: trusted, not re-derived.
        fileHash = try reader.readHash()
        chunks = try Self.readChunkList(from: &reader, size: size)
        permissions = Self.defaultPermissions
    }

    /// `u32` count, then per chunk `u32` length and hash; the lengths must be
    /// 1 … 16 MiB each and add up to `size`.
    package static func readChunkList(from reader: inout ByteReader, size: UInt64) throws(ByteReaderError) -> [ChunkRef] {
        let count = try reader.readCount(limit: Limits.maxChunkCount)
        // Each chunk needs 36 bytes, so a lying count cannot make us reserve more than the input backs.
        guard count * 36 <= reader.remaining else { throw .truncated(needed: count * 36, available: reader.remaining) }
        var chunks = [ChunkRef]()
        chunks.reserveCapacity(count)
        var total: UInt64 = 0
        for _ in 0..<count {
            let length = try reader.readUInt32()
            guard length > 0, length <= ChunkerConfiguration.absoluteMaxChunkSize else {
                throw .invalidValue("chunk length \(length)")
            }
            total += UInt64(length)
            chunks.append(ChunkRef(length: length, hash: try reader.readHash()))
        }
        guard total == size else { throw .invalidValue("chunk lengths add up to \(total), file size is \(size)") }
        return chunks
    }

    /// The file hash of an encoded manifest, read without decoding the rest,
    /// when it describes `path` with `size` and `modificationTimeNs`; nil when it
    /// does not, or is not a manifest of this version. The fields are those
    /// `init(from:)` reads first; the chunk list is neither read nor checked: for
    /// a caller that needs only which bytes the file held (a receiver asking
    /// whether a file is already in place), where decoding every chunk of every
    /// file was most of the cost.
    package static func fileHash(
        inEncoded bytes: [UInt8], path: RelativePath, size: UInt64, modificationTimeNs: Int64
    ) -> Hash256? {
        var reader = ByteReader(bytes)
        do throws(ByteReaderError) {
            guard try reader.readUInt8() == encodingVersion,
                  try reader.readSlice(Int(reader.readUInt16())).elementsEqual(path.string.utf8),
                  try reader.readUInt64() == size, try reader.readInt64() == modificationTimeNs
            else { return nil }
            return try reader.readHash()
        } catch {
            return nil
        }
    }

    package init(encoded bytes: [UInt8]) throws(ByteReaderError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd()
    }
}
