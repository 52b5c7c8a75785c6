/// Reads the content identifier of a HEIF/HEIC file from its Exif item:
/// `meta` → `iinf` (find items of type "Exif") → `iloc` (find their bytes) →
/// Exif item → TIFF → Apple MakerNote.
enum HEIFExifReader {
    /// `meta` is a top-level box of `source`.
    package static func contentIdentifier<Source: MediaByteSource>(meta: ISOBMFFBox, in source: Source) throws(MediaMetadataError) -> String? {
        let children = try MetaBoxLayout.children(of: try source.readPayload(of: meta))
        var iinf: MediaByteView?
        var iloc: MediaByteView?
        var idat: MediaByteView?
        var boxes = children.boxes()
        while let box = try boxes.next() {
            switch box.type {
            case .iinf where iinf == nil: iinf = try children.readPayload(of: box)
            case .iloc where iloc == nil: iloc = try children.readPayload(of: box)
            case .idat where idat == nil: idat = try children.readPayload(of: box)
            default: break
            }
        }
        guard let iinf, let iloc else { return nil }

        let exifItems = try HEIFItemInfo.itemIDs(ofType: .exif, inPayload: iinf, limit: MediaMetadataLimits.maxExifItems)
        guard !exifItems.isEmpty else { return nil }
        let locations = try HEIFItemLocation.locations(of: Set(exifItems), inPayload: iloc)
        for itemID in exifItems {
            guard let location = locations[itemID] else { continue }
            let item = MediaByteView(try location.readBytes(from: source, idat: idat, limit: MediaMetadataLimits.maxExifBytes))
            if let identifier = try contentIdentifier(inExifItem: item) {
                return identifier
            }
        }
        return nil
    }

    /// An Exif item is a u32 `exif_tiff_header_offset` (bytes to skip after
    /// it, ISO/IEC 23008-12 Annex A) and then Exif data, in practice
    /// "Exif\0\0" + TIFF with an offset of 6. We also tolerate writers that
    /// leave the "Exif\0\0" prefix out of the offset.
    package static func contentIdentifier(inExifItem item: MediaByteView) throws(MediaMetadataError) -> String? {
        let skip = try MediaByteView.int(try item.uint32(at: 0))
        var tiffStart = 4 + skip
        if item.hasPrefix(JPEGExifLocator.exifHeader, at: tiffStart) {
            tiffStart += JPEGExifLocator.exifHeader.count
        }
        let tiff = try item.subview(at: tiffStart)
        guard let makerNote = try ExifMakerNoteLocator.makerNote(inTIFF: tiff) else { return nil }
        return try AppleMakerNote.contentIdentifier(in: makerNote)
    }
}
