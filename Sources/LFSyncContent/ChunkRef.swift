import LFSyncCrypto

/// One content-defined chunk of a file: its length and BLAKE2b-256.
public struct ChunkRef: Hashable, Sendable, Codable {
    public var length: UInt32
    public var hash: Hash256

    public init(length: UInt32, hash: Hash256) {
        self.length = length
        self.hash = hash
    }
}
