import LFSyncCrypto
import LFSyncSystem

/// The identity of an asset's *content*: keyed BLAKE2b-256 (`ContentHash.content`)
/// over its (role, file hash) pairs in canonical order. File names and paths play no part, so renaming or
/// moving an asset never changes it.
public struct ContentID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public let hash: Hash256

    public init(hash: Hash256) {
        self.hash = hash
    }

    public init?(hex: String) {
        guard let hash = Hash256(hex: hex) else { return nil }
        self.hash = hash
    }

    /// The canonical encoding hashed into a content ID (PROTOCOL.md, "Content ID"):
    /// `0x01` version, u32 count, then per file in ascending (role, hash) order:
    /// u8 role, 32-byte file hash.
    public static func canonicalEncoding(of files: [(role: FileRole, fileHash: Hash256)]) -> [UInt8] {
        let ordered = files.sorted { ($0.role.rawValue, $0.fileHash) < ($1.role.rawValue, $1.fileHash) }
        var writer = ByteWriter(capacity: 5 + ordered.count * 33)
        writer.write(UInt8(1))
        writer.write(UInt32(ordered.count))
        for file in ordered {
            writer.write(file.role.rawValue)
            writer.write(file.fileHash)
        }
        return writer.bytes
    }

    public init(files: [(role: FileRole, fileHash: Hash256)]) {
        hash = ContentHash.content(Self.canonicalEncoding(of: files))
    }

    public var hex: String { hash.hex }
    public var description: String { hash.hex }
    public static func < (lhs: ContentID, rhs: ContentID) -> Bool { lhs.hash < rhs.hash }

    public init(from decoder: any Decoder) throws { hash = try Hash256(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try hash.encode(to: encoder) }
}
