/// The header of one ISOBMFF / QuickTime box (atom), located in its source.
///
/// Only the header is read; the payload stays on disk until a caller decides it
/// is worth loading, which is how we step over a multi-gigabyte `mdat`.
package struct ISOBMFFBox {
    package let type: FourCC
    /// Absolute offset of the box's first byte in its source.
    package let offset: UInt64
    /// 8, or 16 with a 64-bit `largesize`.
    package let headerSize: Int
    /// Total size including the header; proven to fit inside the parent.
    package let size: UInt64

    package var payloadOffset: UInt64 { offset + UInt64(headerSize) }
    package var payloadSize: UInt64 { size - UInt64(headerSize) }
    package var end: UInt64 { offset + size }
}

extension MediaByteSource {
    /// Loads a box's payload, refusing payloads above `limit` bytes.
    func readPayload(of box: ISOBMFFBox, limit: Int = MediaMetadataLimits.maxSingleRead) throws(MediaMetadataError) -> MediaByteView {
        guard box.payloadSize <= UInt64(limit) else {
            throw .overLimit("'\(box.type)' payload of \(box.payloadSize) bytes")
        }
        return try view(at: box.payloadOffset, length: Int(box.payloadSize))
    }

    /// The boxes in `range` of this source, lazily.
    func boxes(in range: Range<UInt64>, maxCount: Int = MediaMetadataLimits.maxBoxesPerContainer) -> ISOBMFFBoxIterator<Self> {
        ISOBMFFBoxIterator(source: self, range: range, maxCount: maxCount)
    }

    /// The top-level boxes of this source.
    func boxes() -> ISOBMFFBoxIterator<Self> {
        boxes(in: 0..<size)
    }

    /// The children of a container box, lazily.
    func children(of box: ISOBMFFBox) -> ISOBMFFBoxIterator<Self> {
        boxes(in: box.payloadOffset..<box.end)
    }
}
