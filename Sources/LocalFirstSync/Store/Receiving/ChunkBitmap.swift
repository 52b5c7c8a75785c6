/// Which chunks of a file are present, one bit each: a 256 GiB file's 4 Mi
/// chunks fit in 512 KiB, where a `Set<Int>` would need tens of megabytes.
public struct ChunkBitmap: Hashable, Sendable, CustomStringConvertible {
    public let chunkCount: Int
    private var words: [UInt64]
    /// Number of set bits, kept up to date so `isComplete` is O(1).
    public private(set) var count: Int = 0

    public init(chunkCount: Int) {
        precondition(chunkCount >= 0)
        self.chunkCount = chunkCount
        words = [UInt64](repeating: 0, count: (chunkCount + 63) / 64)
    }

    public func contains(_ index: Int) -> Bool {
        guard index >= 0, index < chunkCount else { return false }
        return words[index >> 6] & (1 << UInt64(index & 63)) != 0
    }

    public mutating func insert(_ index: Int) {
        precondition(index >= 0 && index < chunkCount, "chunk index out of range")
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit == 0 {
            words[index >> 6] |= bit
            count += 1
        }
    }

    public mutating func remove(_ index: Int) {
        precondition(index >= 0 && index < chunkCount, "chunk index out of range")
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit != 0 {
            words[index >> 6] &= ~bit
            count -= 1
        }
    }

    public var isComplete: Bool { count == chunkCount }
    public var missingCount: Int { chunkCount - count }

    /// Present chunk indices, ascending.
    public var indices: [Int] { (0..<chunkCount).filter(contains) }

    /// Chunks still to be fetched, ascending: what an offer reply asks for.
    public var missingIndices: [Int] { (0..<chunkCount).filter { !contains($0) } }

    public var description: String { "\(count)/\(chunkCount) chunks" }
}
