import LFSyncCrypto
import LFSyncStore

/// Where the receiver may already have a chunk's bytes, so it can copy them
/// locally instead of asking the peer. Always a hint: `IncomingFile.copyChunk`
/// re-verifies the hash of what it reads.
package enum ChunkSource: Hashable, Sendable {
    /// A range of a file already in the library, as the chunk index recorded it.
    case library(ChunkLocation)
    /// A range of another file's staged partial (`<fileHash>.partial`): lets
    /// two files of one offer that share chunks fetch them once.
    case partial(fileHash: Hash256, offset: UInt64, length: UInt32)
}
