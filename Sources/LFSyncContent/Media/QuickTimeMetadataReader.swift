/// Reads the content identifier of a QuickTime / MP4 movie from its movie-level
/// metadata: `moov` → `meta` (handler `mdta`) → `keys` → `ilst`.
///
/// `keys` (FullBox) lists entries of u32 size, 4cc namespace and key text;
/// `ilst` holds one box per value whose *type* is the 1-based key index and
/// which contains `data` boxes of u32 type indicator, u32 locale, value.
enum QuickTimeMetadataReader {
    package static let contentIdentifierKey = Array("com.apple.quicktime.content.identifier".utf8)
    /// Well-known data type 1: UTF-8 text without a terminator.
    package static let utf8DataType: UInt32 = 1

    /// `moov` is a top-level box of `source`; only its `meta` children are loaded.
    package static func contentIdentifier<Source: MediaByteSource>(moov: ISOBMFFBox, in source: Source) throws(MediaMetadataError) -> String? {
        var children = source.children(of: moov)
        while let box = try children.next() {
            guard box.type == .meta else { continue }
            if let identifier = try contentIdentifier(inMetaPayload: try source.readPayload(of: box)) {
                return identifier
            }
        }
        return nil
    }

    package static func contentIdentifier(inMetaPayload payload: MediaByteView) throws(MediaMetadataError) -> String? {
        let children = try MetaBoxLayout.children(of: payload)
        var handler: FourCC?
        var keys: MediaByteView?
        var items: ISOBMFFBox?
        var boxes = children.boxes()
        while let box = try boxes.next() {
            switch box.type {
            case .hdlr where handler == nil:
                // FullBox version/flags, u32 pre_defined (QuickTime: component type), then the handler type.
                handler = FourCC(rawValue: try children.readPayload(of: box).uint32(at: 8))
            case .keys where keys == nil: keys = try children.readPayload(of: box)
            case .ilst where items == nil: items = box
            default: break
            }
        }
        guard handler == .mdta, let keys, let items,
              let keyIndex = try index(of: contentIdentifierKey, inKeys: keys) else { return nil }

        var entries = children.children(of: items)
        while let entry = try entries.next() {
            guard entry.type.rawValue == keyIndex else { continue }
            var values = children.children(of: entry)
            while let value = try values.next() {
                guard value.type == .data else { continue }
                let data = try children.readPayload(of: value)
                guard data.count >= 8 else { throw .truncated("'data' box of \(data.count) bytes") }
                let typeIndicator = try data.uint32(at: 0)
                // The high byte is the type set (0 = well-known types); the rest is the type.
                guard typeIndicator == utf8DataType else { continue }
                return try ContentIdentifierText.decode(try data.bytes(at: 8, length: data.count - 8))
            }
        }
        return nil
    }

    /// The 1-based index of the `mdta` key equal to `key`, or nil.
    package static func index(of key: [UInt8], inKeys payload: MediaByteView) throws(MediaMetadataError) -> UInt32? {
        var cursor = MediaByteCursor(payload)
        try cursor.skip(4) // version and flags
        let entryCount = try cursor.readUInt32()
        guard entryCount <= UInt32(MediaMetadataLimits.maxKeys) else { throw .overLimit("keys with \(entryCount) entries") }
        guard Int(entryCount) * 8 <= cursor.remaining else { throw .truncated("keys with \(entryCount) entries") }
        var index: UInt32 = 0
        while index < entryCount {
            index += 1
            let keySize = try MediaByteView.int(try cursor.readUInt32())
            guard keySize >= 8 else { throw .malformed("key size \(keySize)") }
            let namespace = try cursor.readFourCC()
            let name = try cursor.readBytes(keySize - 8)
            if namespace == .mdta, name == key {
                return index
            }
        }
        return nil
    }
}
