/// A tiny seeded generator (Steele et al., SplitMix64) for reproducible test
/// and benchmark data: the golden chunking vector and the benchmark corpora
/// depend on every implementation producing the same stream from a seed.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` bytes: each 64-bit output, little-endian, in order.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        fill(&out)
        return out
    }

    package mutating func fill(_ out: inout [UInt8]) {
        out.withUnsafeMutableBytes { fill($0) }
    }

    package mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var index = 0
        let count = buffer.count
        while index < count {
            var word = next()
            let take = min(8, count - index)
            for offset in 0..<take {
                buffer[index + offset] = UInt8(truncatingIfNeeded: word)
                word >>= 8
            }
            index += take
        }
    }
}
