/// Preparation progress: what the scanner is doing before any byte moves.
public struct ScanProgress: Sendable, Hashable {
    public enum Phase: String, Sendable, Hashable { case walking, hashing, grouping, finished }

    public var phase: Phase
    /// Files found so far (walking) or in the library (later phases).
    public var filesTotal: Int
    /// Files whose manifest is known, from the cache or freshly hashed.
    public var filesDone: Int
    /// Bytes that need hashing (cache misses only).
    public var bytesToHash: UInt64
    public var bytesHashed: UInt64

    public var fractionCompleted: Double {
        switch phase {
        case .walking: 0
        case .grouping, .finished: 1
        case .hashing: bytesToHash == 0 ? 1 : Double(bytesHashed) / Double(bytesToHash)
        }
    }
}
