import LFSyncCrypto

/// One version of one path of a library: its content — a file, by its file hash, or the
/// path deleted — and where it stands in the path's history (its version vector), with who
/// made it and when (only to pick a conflict's winner the same way on every device).
package struct PathVersion: Hashable, Sendable, CustomStringConvertible {
    package enum Content: Hashable, Sendable {
        case file(Hash256)
        case deleted
    }

    package var content: Content
    package var vector: VersionVector
    /// Milliseconds since 1970 by the writer's clock when it made this version.
    package var changedAt: Int64
    /// The short ID of the device that made it (`DeviceShortID`).
    package var changedBy: UInt64

    package init(content: Content, vector: VersionVector, changedAt: Int64, changedBy: UInt64) {
        self.content = content
        self.vector = vector
        self.changedAt = changedAt
        self.changedBy = changedBy
    }

    package var isDeleted: Bool { content == .deleted }

    package var fileHash: Hash256? {
        if case let .file(hash) = content { hash } else { nil }
    }

    /// Which of two concurrent versions keeps the path (the other becomes a conflict copy):
    /// a file over a deletion (a concurrent edit is never dropped), then the later change,
    /// then the device with the larger short ID, then the larger file hash. Every device
    /// decides the same, whatever order it learns the two in.
    package static func winner(of a: PathVersion, _ b: PathVersion) -> PathVersion {
        if a.isDeleted != b.isDeleted { return a.isDeleted ? b : a }
        if a.changedAt != b.changedAt { return a.changedAt > b.changedAt ? a : b }
        if a.changedBy != b.changedBy { return a.changedBy > b.changedBy ? a : b }
        switch (a.content, b.content) {
        case let (.file(x), .file(y)): return x.bytes.lexicographicallyPrecedes(y.bytes) ? b : a
        default: return a
        }
    }

    package var description: String {
        switch content {
        case let .file(hash): "\(hash.shortHex)\(vector)"
        case .deleted: "deleted\(vector)"
        }
    }
}

/// A device's 64-bit name in version vectors: the first 8 bytes, big-endian, of its
/// Device ID hash (a collision among a household's devices is 2^-64 unlikely).
package enum DeviceShortID {
    package static func of(_ id: DeviceID) -> UInt64 {
        id.hash.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
