import LFSyncStore
/// Which chunks of a file are present, one bit each: a 256 GiB file's 4 Mi
/// chunks fit in 512 KiB, where a `Set<Int>` would need tens of megabytes.
package struct ChunkBitmap: Hashable, Sendable, CustomStringConvertible {
    package let chunkCount: Int
    private var words: [UInt64]
    /// Number of set bits, kept up to date so `isComplete` is O(1).
    package private(set) var count: Int = 0

    package init(chunkCount: Int) {
        precondition(chunkCount >= 0)
        self.chunkCount = chunkCount
        words = [UInt64](repeating: 0, count: (chunkCount + 63) / 64)
    }

    package func contains(_ index: Int) -> Bool {
        guard index >= 0, index < chunkCount else { return false }
        return words[index >> 6] & (1 << UInt64(index & 63)) != 0
    }

    package mutating func insert(_ index: Int) {
        precondition(index >= 0 && index < chunkCount, "chunk index out of range")
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit == 0 {
            words[index >> 6] |= bit
            count += 1
        }
    }

    package mutating func remove(_ index: Int) {
        precondition(index >= 0 && index < chunkCount, "chunk index out of range")
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit != 0 {
            words[index >> 6] &= ~bit
            count -= 1
        }
    }

    package var isComplete: Bool { count == chunkCount }
    package var missingCount: Int { chunkCount - count }

    /// Present chunk indices, ascending.
    package var indices: [Int] { (0..<chunkCount).filter(contains) }

    /// Chunks still to be fetched, ascending: what an offer reply asks for.
    package var missingIndices: [Int] { (0..<chunkCount).filter { !contains($0) } }

    package var description: String { "\(count)/\(chunkCount) chunks" }
}
