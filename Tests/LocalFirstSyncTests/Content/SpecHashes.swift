@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem

/// The hashes of PROTOCOL.md ("Hashes") computed the way another implementation would,
/// from the specification and libsodium's plain keyed BLAKE2b, without `ContentHash`,
/// `ChunkingHasher` or `ContentID`: what tests hold those to.
enum SpecHashes {
    static func blake2b(_ bytes: [UInt8], key: String) -> Hash256 {
        Hash256(bytes: Blake2b.digest(bytes, outputLength: 32, key: Array(key.utf8)))!
    }

    static func chunk(_ bytes: some Collection<UInt8>) -> Hash256 { blake2b(Array(bytes), key: "lfsync/3 chunk") }

    /// The file hash of `bytes` cut by the protocol's chunker.
    static func file(_ bytes: [UInt8]) -> Hash256 {
        var offset = 0
        var chunks: [(length: Int, hash: Hash256)] = []
        for length in FastCDC.chunkLengths(of: bytes) {
            chunks.append((length, chunk(bytes[offset..<offset + length])))
            offset += length
        }
        return file(chunks: chunks)
    }

    static func file(chunks: [(length: Int, hash: Hash256)]) -> Hash256 {
        var encoding = ByteWriter()
        encoding.write(UInt32(chunks.count))
        for chunk in chunks {
            encoding.write(UInt32(chunk.length))
            encoding.write(contentsOf: chunk.hash.bytes)
        }
        return blake2b(encoding.bytes, key: "lfsync/3 file")
    }
}
