/// Where one HEIF item's bytes live, from the item location box (`iloc`).
struct HEIFItemLocation {
    package struct Extent {
        let offset: UInt64
        /// 0 means "to the end of the data source" (ISO/IEC 14496-12 §8.11.3).
        let length: UInt64
    }

    /// 0: offsets into this file; 1: offsets into the `idat` box; 2: item references.
    package let constructionMethod: UInt8
    package let baseOffset: UInt64
    package let extents: [Extent]

    /// The locations of the `wanted` items; other items are skipped without allocating.
    ///
    /// Layout: FullBox (version 0, 1 or 2); u8 offset_size<<4 | length_size;
    /// u8 base_offset_size<<4 | index_size (index_size reserved in version 0);
    /// item count u16 (v0/v1) or u32 (v2); per item: item ID u16 / u32 (v2),
    /// [v1/v2: u16 with construction_method in the low 4 bits], u16
    /// data_reference_index, base_offset, u16 extent count, per extent:
    /// [v1/v2 and index_size > 0: extent_index], extent_offset, extent_length.
    package static func locations(of wanted: Set<UInt32>, inPayload payload: MediaByteView) throws(MediaMetadataError) -> [UInt32: HEIFItemLocation] {
        var cursor = MediaByteCursor(payload)
        let version = try cursor.readUInt8()
        try cursor.skip(3) // flags
        guard version <= 2 else { throw .unsupported("iloc version \(version)") }
        let sizes = try cursor.readUInt8()
        let moreSizes = try cursor.readUInt8()
        let offsetSize = Int(sizes >> 4)
        let lengthSize = Int(sizes & 0x0F)
        let baseOffsetSize = Int(moreSizes >> 4)
        let indexSize = version == 0 ? 0 : Int(moreSizes & 0x0F)
        for fieldSize in [offsetSize, lengthSize, baseOffsetSize, indexSize] {
            guard fieldSize == 0 || fieldSize == 4 || fieldSize == 8 else {
                throw .malformed("iloc field size \(fieldSize)")
            }
        }
        let itemCount = version < 2 ? Int(try cursor.readUInt16()) : try MediaByteView.int(try cursor.readUInt32())
        guard itemCount <= MediaMetadataLimits.maxItems else { throw .overLimit("iloc with \(itemCount) items") }
        let extentSize = indexSize + offsetSize + lengthSize

        var result: [UInt32: HEIFItemLocation] = [:]
        for _ in 0..<itemCount {
            if result.count == wanted.count { break }
            let itemID = version < 2 ? UInt32(try cursor.readUInt16()) : try cursor.readUInt32()
            let constructionMethod = version == 0 ? 0 : UInt8(try cursor.readUInt16() & 0x000F)
            _ = try cursor.readUInt16() // data_reference_index: 0 is "this file"; others are read as this file too
            let baseOffset = try cursor.readUInt(byteCount: baseOffsetSize)
            let extentCount = Int(try cursor.readUInt16())
            guard extentCount <= MediaMetadataLimits.maxExtentsPerItem else {
                throw .overLimit("iloc item with \(extentCount) extents")
            }
            guard extentCount * extentSize <= cursor.remaining else { throw .truncated("iloc extents") }
            guard wanted.contains(itemID), result[itemID] == nil else {
                try cursor.skip(extentCount * extentSize)
                continue
            }
            var extents: [Extent] = []
            extents.reserveCapacity(extentCount)
            for _ in 0..<extentCount {
                try cursor.skip(indexSize)
                let offset = try cursor.readUInt(byteCount: offsetSize)
                let length = try cursor.readUInt(byteCount: lengthSize)
                extents.append(Extent(offset: offset, length: length))
            }
            result[itemID] = HEIFItemLocation(constructionMethod: constructionMethod, baseOffset: baseOffset, extents: extents)
        }
        return result
    }

    /// Concatenates the item's extents from `file` (method 0) or `idat` (method 1),
    /// refusing more than `limit` bytes in total.
    package func readBytes<Source: MediaByteSource>(from file: Source, idat: MediaByteView?, limit: Int) throws(MediaMetadataError) -> [UInt8] {
        guard !extents.isEmpty else { throw .malformed("item without extents") }
        switch constructionMethod {
        case 0: return try concatenate(from: file, limit: limit)
        case 1:
            guard let idat else { throw .malformed("idat-constructed item without an idat box") }
            return try concatenate(from: idat, limit: limit)
        default: throw .unsupported("iloc construction method \(constructionMethod)")
        }
    }

    private func concatenate<Source: MediaByteSource>(from source: Source, limit: Int) throws(MediaMetadataError) -> [UInt8] {
        var bytes: [UInt8] = []
        for extent in extents {
            let (start, overflow) = baseOffset.addingReportingOverflow(extent.offset)
            guard !overflow, start <= source.size else { throw .truncated("item extent at \(baseOffset) + \(extent.offset)") }
            let length = extent.length == 0 ? source.size - start : extent.length
            guard length <= UInt64(limit - bytes.count) else { throw .overLimit("item larger than \(limit) bytes") }
            bytes += try source.read(at: start, length: Int(length))
        }
        return bytes
    }
}
