/// Reads the item information box (`iinf`) of a HEIF `meta` box.
enum HEIFItemInfo {
    /// IDs of the unprotected items of `itemType`, in file order, at most `limit`.
    ///
    /// `iinf` is a FullBox with a u16 (version 0) or u32 entry count, followed by
    /// `infe` boxes. Only `infe` versions 2 and 3 carry an item type (u16 / u32
    /// item ID, u16 protection index, 4cc type); older versions are skipped.
    package static func itemIDs(ofType itemType: FourCC, inPayload payload: MediaByteView, limit: Int) throws(MediaMetadataError) -> [UInt32] {
        var cursor = MediaByteCursor(payload)
        let version = try cursor.readUInt8()
        try cursor.skip(3) // flags
        let declared = version == 0 ? UInt64(try cursor.readUInt16()) : UInt64(try cursor.readUInt32())
        let entryCount = Int(min(declared, UInt64(MediaMetadataLimits.maxItems)))

        var found: [UInt32] = []
        var entries = payload.boxes(in: UInt64(cursor.offset)..<payload.size, maxCount: MediaMetadataLimits.maxItems)
        var seen = 0
        while seen < entryCount, found.count < limit, let box = try entries.next() {
            seen += 1
            guard box.type == .infe else { continue }
            var entry = MediaByteCursor(try payload.readPayload(of: box))
            let entryVersion = try entry.readUInt8()
            try entry.skip(3) // flags
            guard entryVersion >= 2 else { continue }
            let itemID = entryVersion == 2 ? UInt32(try entry.readUInt16()) : try entry.readUInt32()
            let protectionIndex = try entry.readUInt16()
            let type = try entry.readFourCC()
            if type == itemType, protectionIndex == 0 {
                found.append(itemID)
            }
        }
        return found
    }
}
