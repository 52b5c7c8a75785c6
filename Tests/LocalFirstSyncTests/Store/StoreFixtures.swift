import Foundation
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto

/// Deterministic values for the Store tests.
enum StoreFixtures {
    /// A distinct hash per number, without hashing anything.
    static func hash(_ number: Int) -> Hash256 {
        var bytes = [UInt8](repeating: 0xA5, count: 24)
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: number).bigEndian) { bytes.append(contentsOf: $0) }
        // The byte count is fixed at 32, so this cannot fail.
        return Hash256(bytes: bytes)!
    }

    static func contentID(_ number: Int) -> ContentID { ContentID(hash: hash(number)) }

    /// A manifest whose chunks have the given lengths and hashes `hash(chunkSeeds[i])`.
    static func manifest(
        path: String, chunkSeeds: [Int], chunkLength: UInt32 = 65_536, mtimeNs: Int64 = 1_700_000_000_123_456_789
    ) -> FileManifest {
        let chunks = chunkSeeds.map { ChunkRef(length: chunkLength, hash: hash($0)) }
        return FileManifest(
            path: RelativePath(path), size: UInt64(chunks.count) * UInt64(chunkLength), modificationTimeNs: mtimeNs, chunks: chunks)
    }
}
