import LFSyncSystem

/// A set of chunk indices of one file, kept as sorted, disjoint, non-adjacent
/// ranges: "everything" and "everything from chunk 1234 on" (the resume case)
/// are one range, and scattered holes cost 8 bytes each on the wire.
///
/// Ranges rather than a bitmap because the decoded form then costs the same
/// memory as the encoded one — a peer cannot make a small message expand.
package struct ChunkIndexSet: Hashable, Sendable, Sequence, CustomStringConvertible {
    /// Sorted by lower bound, none empty, none touching or overlapping.
    package private(set) var ranges: [Range<UInt32>]

    package init() {
        ranges = []
    }

    /// Normalises any ranges: sorts them, drops empty ones, merges overlapping and adjacent ones.
    package init(ranges: some Sequence<Range<UInt32>>) {
        let sorted = ranges.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [Range<UInt32>] = []
        merged.reserveCapacity(sorted.count)
        for range in sorted {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<Swift.max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    package init(_ indices: some Sequence<UInt32>) {
        self.init(ranges: indices.lazy.filter { $0 < UInt32.max }.map { $0..<$0 + 1 })
    }

    /// Chunks `0..<count`: the whole file.
    package static func all(count: UInt32) -> ChunkIndexSet {
        ChunkIndexSet(ranges: [0..<count])
    }

    /// Already-normalised ranges (the decoder has checked them).
    package init(validatedRanges: [Range<UInt32>]) {
        ranges = validatedRanges
    }

    package var isEmpty: Bool { ranges.isEmpty }

    package var count: Int { ranges.reduce(0) { $0 + $1.count } }

    /// The largest index plus one (0 when empty).
    package var upperBound: UInt32 { ranges.last?.upperBound ?? 0 }

    package func contains(_ index: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound <= index {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < ranges.count && ranges[low].contains(index)
    }

    /// The indices below `limit`, in order: what a sender iterates, so that a
    /// receiver naming chunks up to 2^22 of a file of ten costs ten steps.
    package func indices(below limit: UInt32) -> FlattenSequence<[Range<UInt32>]> {
        var clamped: [Range<UInt32>] = []
        for range in ranges {
            guard range.lowerBound < limit else { break }
            clamped.append(range.lowerBound..<Swift.min(range.upperBound, limit))
        }
        return clamped.joined()
    }

    package func makeIterator() -> FlattenSequence<[Range<UInt32>]>.Iterator {
        ranges.joined().makeIterator()
    }

    package var description: String {
        "{" + ranges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)..<\($0.upperBound)" }
            .joined(separator: ", ") + "}"
    }
}

extension ChunkIndexSet {
    /// u32 range count, then per range u32 first index and u32 count.
    package func encode(into writer: inout ByteWriter) {
        writer.write(UInt32(ranges.count))
        for range in ranges {
            writer.write(range.lowerBound)
            writer.write(UInt32(range.count))
        }
    }

    /// Accepts only the canonical form, with every index below `indexLimit`.
    package init(from reader: inout ByteReader, indexLimit: UInt32) throws(ByteReaderError) {
        let count = try reader.readCount(limit: Int(indexLimit / 2 + 1))
        guard count <= reader.remaining / 8 else { throw .truncated(needed: count * 8, available: reader.remaining) }
        var ranges = [Range<UInt32>]()
        ranges.reserveCapacity(count)
        var previousEnd: UInt32? = nil
        for _ in 0..<count {
            let start = try reader.readUInt32()
            let length = try reader.readUInt32()
            guard length > 0, start < indexLimit, length <= indexLimit - start else {
                throw .invalidValue("chunk range \(start)+\(length) outside 0..<\(indexLimit)")
            }
            if let previousEnd, start <= previousEnd {
                throw .invalidValue("chunk ranges not ascending and disjoint")
            }
            ranges.append(start..<start + length)
            previousEnd = start + length
        }
        self.init(validatedRanges: ranges)
    }

    /// Whether this set is in canonical form within `indexLimit` (what the decoder accepts).
    package func validate(indexLimit: UInt32) throws(ByteReaderError) {
        var previousEnd: UInt32? = nil
        for range in ranges {
            guard !range.isEmpty, range.upperBound <= indexLimit else {
                throw .invalidValue("chunk range \(range) outside 0..<\(indexLimit)")
            }
            if let previousEnd, range.lowerBound <= previousEnd {
                throw .invalidValue("chunk ranges not ascending and disjoint")
            }
            previousEnd = range.upperBound
        }
    }
}
