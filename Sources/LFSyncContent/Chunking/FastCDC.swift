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
    /// Four bytes per step with exactly the byte-at-a-time result: each of the
    /// four fingerprints is computed from the step's *input* (`fp << k` plus a
    /// term of the step's bytes alone), so the loop-carried dependency is one
    /// shift and one add per four bytes instead of per byte, and the four mask
    /// tests are one branch while none matches (they almost never do).
    @inline(__always)
    private static func findCut(
        in base: UnsafePointer<UInt8>, from start: Int, to end: Int,
        fingerprint: UInt64, mask: UInt64, gear: UnsafePointer<UInt64>
    ) -> (position: Int, fingerprint: UInt64, cut: Bool) {
        var fp = fingerprint
        var position = start
        while position + 4 <= end {
            let g0 = gear[Int(base[position])]
            let g1 = gear[Int(base[position + 1])]
            let g2 = gear[Int(base[position + 2])]
            let g3 = gear[Int(base[position + 3])]
            let t1 = (g0 &<< 1) &+ g1
            let t2 = (t1 &<< 1) &+ g2
            let t3 = (t2 &<< 1) &+ g3
            let f0 = (fp &<< 1) &+ g0
            let f1 = (fp &<< 2) &+ t1
            let f2 = (fp &<< 3) &+ t2
            let f3 = (fp &<< 4) &+ t3
            if (f0 & mask) == 0 || (f1 & mask) == 0 || (f2 & mask) == 0 || (f3 & mask) == 0 {
                if f0 & mask == 0 { return (position + 1, f0, true) }
                if f1 & mask == 0 { return (position + 2, f1, true) }
                if f2 & mask == 0 { return (position + 3, f2, true) }
                return (position + 4, f3, true)
            }
            fp = f3
            position += 4
        }
        while position < end {
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
