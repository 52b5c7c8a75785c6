/// Walks the sibling boxes of one container, reading only their headers.
///
/// Each step advances by the box's own size (at least 8 bytes) and never past
/// the container, and the number of steps is capped, so a hostile file can
/// neither loop us forever nor make us read more than a header per step.
package struct ISOBMFFBoxIterator<Source: MediaByteSource> {
    package let source: Source
    private var position: UInt64
    private let end: UInt64
    private let maxCount: Int
    private var visited = 0

    package init(source: Source, range: Range<UInt64>, maxCount: Int) {
        self.source = source
        position = range.lowerBound
        end = min(range.upperBound, source.size)
        self.maxCount = maxCount
    }

    /// The next box, or nil at the end of the container.
    ///
    /// Fewer than 8 trailing bytes end the walk quietly: QuickTime allows a
    /// 32-bit zero terminator at the end of some containers.
    mutating func next() throws(MediaMetadataError) -> ISOBMFFBox? {
        guard position < end, end - position >= 8 else { return nil }
        visited += 1
        guard visited <= maxCount else { throw .overLimit("more than \(maxCount) boxes in one container") }

        let remaining = end - position
        let header = try source.view(at: position, length: Int(min(remaining, 16)))
        let size32 = try header.uint32(at: 0)
        let type = FourCC(rawValue: try header.uint32(at: 4))
        let headerSize: Int
        let size: UInt64
        switch size32 {
        case 0:
            // "Extends to the end of the enclosing container (or file)."
            headerSize = 8
            size = remaining
        case 1:
            headerSize = 16
            size = try header.uint(at: 8, byteCount: 8, .bigEndian)
            guard size >= 16 else { throw .malformed("'\(type)' largesize \(size) below its header") }
        default:
            headerSize = 8
            size = UInt64(size32)
            guard size >= 8 else { throw .malformed("'\(type)' size \(size) below its header") }
        }
        guard size <= remaining else {
            throw .truncated("'\(type)' of \(size) bytes at \(position) with \(remaining) left in its container")
        }
        let box = ISOBMFFBox(type: type, offset: position, headerSize: headerSize, size: size)
        position += size
        return box
    }

    /// The first remaining box of `type`, or nil.
    mutating func first(ofType type: FourCC) throws(MediaMetadataError) -> ISOBMFFBox? {
        while let box = try next() {
            if box.type == type { return box }
        }
        return nil
    }
}
