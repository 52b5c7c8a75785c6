/// Content-defined chunking (FastCDC with normalised chunking), as a
/// streaming state machine: feed it buffers of any size, in order, and it
/// reports where chunks end. It keeps no bytes itself, so memory does not
/// grow with the file.
///
/// A chunk boundary depends only on the bytes since the previous boundary,
/// which is what makes an insertion near the start of a file disturb only
/// the chunks around it.
package struct FastCDC: Sendable {
    package let configuration: ChunkerConfiguration
    /// Bytes of the current (unfinished) chunk seen so far.
    package private(set) var pendingLength = 0
    private var fingerprint: UInt64 = 0

    package init(configuration: ChunkerConfiguration = .default) {
        self.configuration = configuration
    }

    /// Scans `buffer` and calls `onCut` with the offset *within this buffer*
    /// just past each chunk that ends in it. Bytes after the last cut belong
    /// to a chunk that continues in the next buffer (or ends at `finish`).
    package mutating func scan(_ buffer: UnsafeRawBufferPointer, onCut: (Int) -> Void) {
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let minSize = configuration.minSize
        let averageSize = configuration.averageSize
        let maxSize = configuration.maxSize
        var index = 0
        GearTable.values.withUnsafeBufferPointer { gearBuffer in
            // The table has exactly 256 entries, so any UInt8 indexes it.
            let gear = gearBuffer.baseAddress.unsafelyUnwrapped
            while index < count {
                if pendingLength < minSize {
                    // FastCDC never cuts below the minimum, so these bytes are not even hashed.
                    let skip = Swift.min(minSize - pendingLength, count - index)
                    pendingLength += skip
                    index += skip
                    if pendingLength == minSize { fingerprint = 0 }
                    continue
                }
                let (mask, boundary) = pendingLength < averageSize
                    ? (configuration.smallMask, averageSize)
                    : (configuration.largeMask, maxSize)
                let end = Swift.min(count, index + (boundary - pendingLength))
                let (position, fp, cut) = Self.findCut(in: base, from: index, to: end, fingerprint: fingerprint, mask: mask, gear: gear)
                pendingLength += position - index
                index = position
                fingerprint = fp
                if cut || pendingLength == maxSize {
                    onCut(index)
                    pendingLength = 0
                    fingerprint = 0
                }
            }
        }
    }

    /// The gear-hash loop: the first position in `start..<end` after which
    /// `fingerprint & mask == 0`, or `end`.
    ///
    /// Two bytes per step with exactly the byte-at-a-time result: the second
    /// fingerprint is computed from the first step's *input* (`fp << 2` plus
    /// a term independent of `fp`), so the loop-carried dependency is one
    /// shift and one add per two bytes instead of per byte.
    @inline(__always)
    private static func findCut(
        in base: UnsafePointer<UInt8>, from start: Int, to end: Int,
        fingerprint: UInt64, mask: UInt64, gear: UnsafePointer<UInt64>
    ) -> (position: Int, fingerprint: UInt64, cut: Bool) {
        var fp = fingerprint
        var position = start
        while position + 2 <= end {
            let first = gear[Int(base[position])]
            let second = gear[Int(base[position + 1])]
            let afterFirst = (fp &<< 1) &+ first
            let afterSecond = (fp &<< 2) &+ ((first &<< 1) &+ second)
            if afterFirst & mask == 0 { return (position + 1, afterFirst, true) }
            if afterSecond & mask == 0 { return (position + 2, afterSecond, true) }
            fp = afterSecond
            position += 2
        }
        if position < end {
            fp = (fp &<< 1) &+ gear[Int(base[position])]
            position += 1
            if fp & mask == 0 { return (position, fp, true) }
        }
        return (position, fp, false)
    }

    /// Ends the stream; true when a final, shorter chunk was pending.
    package mutating func finish() -> Bool {
        defer {
            pendingLength = 0
            fingerprint = 0
        }
        return pendingLength > 0
    }

    /// Chunk lengths of an in-memory buffer; convenient for tests and small inputs.
    package static func chunkLengths(of bytes: [UInt8], configuration: ChunkerConfiguration = .default) -> [Int] {
        var chunker = FastCDC(configuration: configuration)
        var lengths = [Int]()
        var chunkStart = 0
        bytes.withUnsafeBytes { buffer in
            chunker.scan(buffer) { end in
                lengths.append(end - chunkStart)
                chunkStart = end
            }
        }
        if chunker.finish() { lengths.append(bytes.count - chunkStart) }
        return lengths
    }
}
