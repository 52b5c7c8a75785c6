/// FastCDC parameters. Both peers must cut identically for deduplication to
/// work, so the defaults are part of the protocol (PROTOCOL.md, "Chunking").
package struct ChunkerConfiguration: Sendable, Hashable {
    public let minSize: Int
    public let averageSize: Int
    public let maxSize: Int
    /// Cut test before `averageSize`: more one-bits, so early cuts are rarer.
    package let smallMask: UInt64
    /// Cut test after `averageSize`: fewer one-bits, so a cut comes soon.
    package let largeMask: UInt64

    /// No chunk on the wire or on disk may exceed this, whatever a peer claims its configuration is.
    public static let absoluteMaxChunkSize: UInt32 = 16 << 20

    /// min 64 KiB, average 256 KiB, max 1 MiB.
    public static let `default` = ChunkerConfiguration(minSize: 64 << 10, averageSize: 256 << 10, maxSize: 1 << 20)

    /// - Precondition: `averageSize` is a power of two and `minSize < averageSize < maxSize ≤ absoluteMaxChunkSize`.
    public init(minSize: Int, averageSize: Int, maxSize: Int) {
        precondition(averageSize > 0 && averageSize & (averageSize - 1) == 0, "average chunk size must be a power of two")
        precondition(0 < minSize && minSize < averageSize && averageSize < maxSize && maxSize <= Int(Self.absoluteMaxChunkSize))
        self.minSize = minSize
        self.averageSize = averageSize
        self.maxSize = maxSize
        // Normalisation level 2 (FastCDC §3.3): log2(avg) ± 2 mask bits. The
        // bits are the *top* bits of the 64-bit gear hash, because with a
        // left-shifting gear hash bit k depends only on the last k+1 bytes:
        // the top bits see the widest window.
        let bits = averageSize.trailingZeroBitCount
        smallMask = Self.topBits(bits + 2)
        largeMask = Self.topBits(bits - 2)
    }

    private static func topBits(_ count: Int) -> UInt64 {
        count <= 0 ? 0 : ~UInt64(0) << UInt64(64 - count)
    }
}
