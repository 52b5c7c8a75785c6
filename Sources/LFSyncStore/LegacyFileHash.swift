import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

/// A file as the scan cache knew it before content hashes were keyed: its size, its
/// mtime, and the unkeyed BLAKE2b-256 of its bytes (see `LibraryHashUpgrade`).
package struct LegacyFileHash: Sendable, Hashable {
    public var size: UInt64
    public var modificationTimeNs: Int64
    public var fileHash: Hash256

    /// The file hash of a version-1 manifest (`u8 1`, `u16` path length and path, `u64`
    /// size, `i64` mtime, then the hash), read without the rest; nil for anything else.
    static func fileHash(inVersion1Manifest bytes: [UInt8]) -> Hash256? {
        var reader = ByteReader(bytes)
        do throws(ByteReaderError) {
            guard try reader.readUInt8() == 1 else { return nil }
            _ = try reader.readSlice(Int(reader.readUInt16()))
            _ = try reader.readUInt64()
            _ = try reader.readInt64()
            return try reader.readHash()
        } catch {
            return nil
        }
    }
}
