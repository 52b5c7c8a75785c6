/// Reads the Live Photo content identifier from Apple's Exif MakerNote.
///
/// Layout, as written by iOS and decoded by exiftool (`MakerNotes.pm`:
/// `Start => '$valuePtr + 14'`, `Base => '$start - 14'`; tag table `Apple.pm`):
///
///     0  "Apple iOS\0"   10-byte signature
///    10  00 01           MakerNote version
///    12  "MM"            byte order of the IFD below (iOS writes "MM")
///    14  IFD             standard TIFF directory; its value offsets are
///                        relative to byte 0 of the MakerNote, not the TIFF header
///
/// Tag 0x0011 (ASCII, 37 bytes incl. NUL) is the content identifier shared by
/// the still and the video of a Live Photo.
enum AppleMakerNote {
    package static let signature = Array("Apple iOS\0".utf8)
    package static let directoryOffset = 14
    package static let contentIdentifierTag: UInt16 = 0x0011

    /// The identifier, or nil when this is not an Apple MakerNote or it has none.
    package static func contentIdentifier(in makerNote: MediaByteView) throws(MediaMetadataError) -> String? {
        guard makerNote.hasPrefix(signature) else { return nil }
        let order: MediaByteView.ByteOrder
        if makerNote.hasPrefix(Array("MM".utf8), at: 12) {
            order = .bigEndian
        } else if makerNote.hasPrefix(Array("II".utf8), at: 12) {
            order = .littleEndian
        } else {
            throw .unsupported("Apple MakerNote without a byte order mark at offset 12")
        }
        guard let entry = try TIFFDirectory.entry(tag: contentIdentifierTag, inDirectoryAt: directoryOffset, of: makerNote, order: order) else {
            return nil
        }
        guard entry.elementSize == 1 else { throw .malformed("Apple content identifier of type \(entry.type)") }
        let raw = try entry.valueBytes(in: makerNote, order: order, limit: MediaMetadataLimits.maxIdentifierBytes)
        return try ContentIdentifierText.decode(raw)
    }
}
