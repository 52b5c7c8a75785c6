/// Finds the MakerNote inside an Exif TIFF structure: IFD0 → Exif IFD (tag
/// 0x8769) → MakerNote (tag 0x927C, UNDEFINED bytes).
enum ExifMakerNoteLocator {
    package static let exifIFDPointerTag: UInt16 = 0x8769
    package static let makerNoteTag: UInt16 = 0x927C

    /// A view that starts at the MakerNote's first byte and runs to the end of
    /// the TIFF data, or nil when the file has no Exif IFD or MakerNote.
    ///
    /// The view is not cut at the MakerNote's declared count: some writers let
    /// MakerNote values spill past it, and every access is bounds-checked anyway.
    package static func makerNote(inTIFF tiff: MediaByteView) throws(MediaMetadataError) -> MediaByteView? {
        let order: MediaByteView.ByteOrder
        if tiff.hasPrefix(Array("II".utf8)) {
            order = .littleEndian
        } else if tiff.hasPrefix(Array("MM".utf8)) {
            order = .bigEndian
        } else {
            throw .malformed("TIFF byte order mark")
        }
        guard try tiff.uint16(at: 2, order) == 42 else { throw .malformed("TIFF magic number") }
        let ifd0 = try MediaByteView.int(try tiff.uint32(at: 4, order))

        guard let pointer = try TIFFDirectory.entry(tag: exifIFDPointerTag, inDirectoryAt: ifd0, of: tiff, order: order) else {
            return nil
        }
        guard pointer.type == TIFFEntry.typeLong || pointer.type == TIFFEntry.typeIFD, pointer.count == 1 else {
            throw .malformed("Exif IFD pointer of type \(pointer.type) × \(pointer.count)")
        }
        let exifIFD = try MediaByteView.int(try tiff.uint32(at: pointer.valueFieldOffset, order))

        guard let note = try TIFFDirectory.entry(tag: makerNoteTag, inDirectoryAt: exifIFD, of: tiff, order: order) else {
            return nil
        }
        let length = try note.byteLength(limit: tiff.count)
        guard note.elementSize == 1, length > 4 else { return nil } // not a byte blob, or too small to matter
        let start = try note.valueOffset(in: tiff, order: order, length: length)
        _ = try tiff.subview(at: start, length: length) // the declared bytes must exist
        return try tiff.subview(at: start)
    }
}
