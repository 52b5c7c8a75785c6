/// One 12-byte entry of a TIFF image file directory (IFD).
struct TIFFEntry {
    package let tag: UInt16
    package let type: UInt16
    package let count: UInt32
    /// Offset (in the directory's view) of the 4-byte value-or-offset field.
    package let valueFieldOffset: Int

    package static let typeASCII: UInt16 = 2
    package static let typeLong: UInt16 = 4
    package static let typeUndefined: UInt16 = 7
    package static let typeIFD: UInt16 = 13

    /// Bytes per element of each TIFF / Exif field type; nil for unknown types.
    package var elementSize: Int? {
        switch type {
        case 1, 2, 6, 7: 1          // BYTE, ASCII, SBYTE, UNDEFINED
        case 3, 8: 2                // SHORT, SSHORT
        case 4, 9, 11, 13: 4        // LONG, SLONG, FLOAT, IFD
        case 5, 10, 12, 16, 17, 18: 8 // RATIONAL, SRATIONAL, DOUBLE, LONG8, SLONG8, IFD8
        default: nil
        }
    }

    /// Byte length of the value, refused above `limit` before anything is read.
    package func byteLength(limit: Int) throws(MediaMetadataError) -> Int {
        guard let elementSize else { throw .malformed("TIFF tag \(tag) has unknown type \(type)") }
        let (length, overflow) = Int(count).multipliedReportingOverflow(by: elementSize)
        guard !overflow, length <= limit else { throw .overLimit("TIFF tag \(tag) value of \(count) × \(elementSize) bytes") }
        return length
    }

    /// Where the value lives: inline in the entry when it fits in 4 bytes,
    /// otherwise at the stored offset, which is relative to `offsetBase`
    /// (the TIFF header, or the start of an Apple MakerNote).
    package func valueOffset(in directory: MediaByteView, order: MediaByteView.ByteOrder, length: Int) throws(MediaMetadataError) -> Int {
        if length <= 4 { return valueFieldOffset }
        return try MediaByteView.int(try directory.uint32(at: valueFieldOffset, order))
    }

    /// The value bytes; `view` is both the directory's view and the offset base,
    /// which holds for plain TIFF and for Apple's MakerNote alike.
    package func valueBytes(in view: MediaByteView, order: MediaByteView.ByteOrder, limit: Int) throws(MediaMetadataError) -> [UInt8] {
        let length = try byteLength(limit: limit)
        return try view.bytes(at: valueOffset(in: view, order: order, length: length), length: length)
    }
}
