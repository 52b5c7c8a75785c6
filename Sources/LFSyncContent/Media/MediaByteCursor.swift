/// A forward cursor over a `MediaByteView` for the sequential big-endian
/// records of ISOBMFF (`iinf`, `iloc`, `keys`, ...).
struct MediaByteCursor {
    package let view: MediaByteView
    private(set) var offset: Int = 0

    package init(_ view: MediaByteView) {
        self.view = view
    }

    package init(_ bytes: [UInt8]) {
        view = MediaByteView(bytes)
    }

    package var remaining: Int { view.count - offset }

    package mutating func readUInt8() throws(MediaMetadataError) -> UInt8 {
        let value = try view.uint8(at: offset)
        offset += 1
        return value
    }

    package mutating func readUInt16() throws(MediaMetadataError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readUInt(byteCount: 2))
    }

    package mutating func readUInt32() throws(MediaMetadataError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readUInt(byteCount: 4))
    }

    /// A big-endian unsigned integer of 0...8 bytes.
    package mutating func readUInt(byteCount: Int) throws(MediaMetadataError) -> UInt64 {
        let value = try view.uint(at: offset, byteCount: byteCount, .bigEndian)
        offset += byteCount
        return value
    }

    package mutating func readFourCC() throws(MediaMetadataError) -> FourCC {
        FourCC(rawValue: try readUInt32())
    }

    package mutating func readBytes(_ length: Int) throws(MediaMetadataError) -> [UInt8] {
        let value = try view.bytes(at: offset, length: length)
        offset += length
        return value
    }

    package mutating func skip(_ length: Int) throws(MediaMetadataError) {
        guard length >= 0, length <= remaining else { throw .truncated("skip of \(length) with \(remaining) left") }
        offset += length
    }
}
