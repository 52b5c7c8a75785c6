import LFSyncCrypto
import LFSyncSystem

/// The hashes that name content (PROTOCOL.md, "Hashes"): BLAKE2b-256 under a key of
/// its own for each use, so that no chunk hash can pass for a file hash or a content ID.
///
/// Why a file's hash is made from its chunk list and not from its bytes: the sender
/// hashes every chunk anyway (a chunk is named by its hash), and so does the receiver
/// (it checks each chunk as it arrives). A hash over the chunk list — lengths and
/// hashes — is as much a function of the file's bytes alone (the cut points are fixed
/// by the protocol), and costs one small hash instead of a second pass over every byte
/// on each side.
package enum ContentHash {
    /// The 14 ASCII bytes `lfsync/3 chunk`: the key of a chunk's hash.
    package static let chunkKey = Array("lfsync/3 chunk".utf8)
    /// The 13 ASCII bytes `lfsync/3 file`: the key of a file's hash.
    package static let fileKey = Array("lfsync/3 file".utf8)
    /// The 16 ASCII bytes `lfsync/3 content`: the key of a content ID.
    package static let contentKey = Array("lfsync/3 content".utf8)

    /// The hash of one chunk's bytes.
    package static func chunk(_ bytes: UnsafeRawBufferPointer) -> Hash256 {
        KeyedBlake2b.hash(bytes, key: chunkKey)
    }

    package static func chunk(_ bytes: [UInt8]) -> Hash256 {
        bytes.withUnsafeBytes { chunk($0) }
    }

    package static func chunk(_ bytes: ArraySlice<UInt8>) -> Hash256 {
        bytes.withUnsafeBytes { chunk($0) }
    }

    /// A hasher for many chunks in a row (a scan), reset after each.
    package static func chunkHasher() -> KeyedBlake2b {
        KeyedBlake2b(key: chunkKey)
    }

    /// The hash of a file of these chunks: keyed by `fileKey`, over `u32` chunk count,
    /// then per chunk `u32` length and its 32-byte hash, big-endian. An empty file has
    /// no chunks: its hash is that of the four bytes `00 00 00 00`.
    package static func file(chunks: [ChunkRef]) -> Hash256 {
        if chunks.count <= 1 {
            // Most files of a library by count: 4 + 36 bytes from the stack, one call.
            // libsodium's one-shot call needs no state, which for an input this small
            // costs more than the hashing on either library.
            var block: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
            return withUnsafeMutableBytes(of: &block) { raw in
                raw.storeBytes(of: UInt32(chunks.count).bigEndian, toByteOffset: 0, as: UInt32.self)
                guard let chunk = chunks.first else {
                    return KeyedBlake2b.hash(UnsafeRawBufferPointer(rebasing: raw[0..<4]), key: fileKey, implementation: .libsodium)
                }
                raw.storeBytes(of: chunk.length.bigEndian, toByteOffset: 4, as: UInt32.self)
                chunk.hash.withUnsafeBytes { hash in
                    UnsafeMutableRawBufferPointer(rebasing: raw[8..<40]).copyMemory(from: hash)
                }
                return KeyedBlake2b.hash(UnsafeRawBufferPointer(rebasing: raw[0..<40]), key: fileKey, implementation: .libsodium)
            }
        }
        var hasher = KeyedBlake2b(key: fileKey)
        var writer = ByteWriter(capacity: 4 + 36 * min(chunks.count, 1024))
        writer.write(UInt32(chunks.count))
        for (index, chunk) in chunks.enumerated() {
            writer.write(chunk.length)
            writer.write(chunk.hash)
            // In pieces: a file of four million chunks would otherwise build 144 MiB here.
            if index % 1024 == 1023 {
                hasher.update(writer.bytes)
                writer = ByteWriter(capacity: 36 * 1024)
            }
        }
        hasher.update(writer.bytes)
        return hasher.finalizeAndReset()
    }

    /// A content ID's hash: keyed by `contentKey`, over `ContentID.canonicalEncoding`.
    package static func content(_ canonicalEncoding: [UInt8]) -> Hash256 {
        KeyedBlake2b.hash(canonicalEncoding, key: contentKey, implementation: .libsodium)
    }
}
