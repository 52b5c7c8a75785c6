/// Looks up entries in a TIFF image file directory without materialising it.
enum TIFFDirectory {
    /// The first entry with `tag` in the IFD at `offset` of `view`, or nil.
    ///
    /// The whole table is bounds-checked before the scan, and the entry count is
    /// capped, so a lying count costs at most one failed check.
    package static func entry(tag: UInt16, inDirectoryAt offset: Int, of view: MediaByteView, order: MediaByteView.ByteOrder) throws(MediaMetadataError) -> TIFFEntry? {
        let entryCount = Int(try view.uint16(at: offset, order))
        guard entryCount <= MediaMetadataLimits.maxIFDEntries else { throw .overLimit("IFD with \(entryCount) entries") }
        let tableStart = offset + 2 // offset + 2 was just proven in bounds
        // Proves every entry lies inside the view; throws .truncated otherwise.
        _ = try view.subview(at: tableStart, length: entryCount * 12)
        for index in 0..<entryCount {
            let entryOffset = tableStart + index * 12
            guard try view.uint16(at: entryOffset, order) == tag else { continue }
            return TIFFEntry(
                tag: tag,
                type: try view.uint16(at: entryOffset + 2, order),
                count: try view.uint32(at: entryOffset + 4, order),
                valueFieldOffset: entryOffset + 8
            )
        }
        return nil
    }
}
