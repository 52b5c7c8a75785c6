import Foundation

/// Builds minimal but structurally real media files in memory, laid out the way
/// iOS writes them, so the metadata reader is tested without binary fixtures
/// of unknown provenance in the repository.
public enum MediaFixtures {
    /// A still whose Apple MakerNote carries `identifier` (or no MakerNote when nil).
    public static func liveStillHEIC(identifier: String?) -> [UInt8] { heic(identifier: identifier) }
    public static func liveStillJPEG(identifier: String?) -> [UInt8] { jpeg(identifier: identifier) }
    /// A QuickTime movie whose `moov/meta` carries `identifier` (or not, when nil).
    public static func liveVideoMOV(identifier: String?) -> [UInt8] { mov(identifier: identifier) }

    static let identifier = "6F0A8F3C-1B2D-4E5F-9A8B-7C6D5E4F3A2B"
    static let otherIdentifier = "0E5B7C1A-9D3F-4A2B-8C6E-1F0D2B3A4C5D"

    // MARK: - Integers and boxes

    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    static func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
    static func u16(_ value: UInt16, littleEndian: Bool) -> [UInt8] { littleEndian ? be16(value).reversed() : be16(value) }
    static func u32(_ value: UInt32, littleEndian: Bool) -> [UInt8] { littleEndian ? be32(value).reversed() : be32(value) }
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A box with a 32-bit size.
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + payload.count)) + ascii(type) + payload
    }

    /// A box with a 32-bit size whose type is a raw number (QuickTime `ilst` items).
    static func box(typeCode: UInt32, _ payload: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + payload.count)) + be32(typeCode) + payload
    }

    /// A box using `size == 1` and a 64-bit `largesize`.
    static func largeBox(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(1) + ascii(type) + be64(UInt64(16 + payload.count)) + payload
    }

    static func fullBox(_ type: String, version: UInt8, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + Array(be32(flags).dropFirst()) + payload)
    }

    // MARK: - TIFF, Exif and the Apple MakerNote

    struct IFDEntry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        var value: [UInt8]

        static func ascii(_ tag: UInt16, _ text: String) -> IFDEntry {
            let bytes = MediaFixtures.ascii(text) + [0]
            return IFDEntry(tag: tag, type: 2, count: UInt32(bytes.count), value: bytes)
        }

        static func long(_ tag: UInt16, _ value: UInt32, littleEndian: Bool, type: UInt16 = 4) -> IFDEntry {
            IFDEntry(tag: tag, type: type, count: 1, value: u32(value, littleEndian: littleEndian))
        }
    }

    /// An IFD (count, 12-byte entries, next-IFD 0) followed by its out-of-line
    /// values; `start` is where the IFD will sit relative to the offset base.
    static func ifd(_ entries: [IFDEntry], placedAt start: Int, littleEndian: Bool) -> [UInt8] {
        let sorted = entries.sorted { $0.tag < $1.tag }
        var table = u16(UInt16(sorted.count), littleEndian: littleEndian)
        var values: [UInt8] = []
        let valuesStart = start + 2 + 12 * sorted.count + 4
        for entry in sorted {
            table += u16(entry.tag, littleEndian: littleEndian) + u16(entry.type, littleEndian: littleEndian)
                + u32(entry.count, littleEndian: littleEndian)
            if entry.value.count <= 4 {
                table += entry.value + Array(repeating: 0, count: 4 - entry.value.count)
            } else {
                table += u32(UInt32(valuesStart + values.count), littleEndian: littleEndian)
                values += entry.value
                if values.count % 2 == 1 { values.append(0) } // TIFF word alignment
            }
        }
        return table + u32(0, littleEndian: littleEndian) + values
    }

    /// Apple's MakerNote: "Apple iOS\0", version 00 01, "MM", then an IFD at
    /// offset 14 whose value offsets count from the MakerNote's first byte
    /// (exiftool MakerNotes.pm: Start = valuePtr + 14, Base = start - 14).
    static func appleMakerNote(identifier: String?, littleEndian: Bool = false) -> [UInt8] {
        var entries: [IFDEntry] = [
            .long(0x0001, 14, littleEndian: littleEndian, type: 9),           // MakerNoteVersion, int32s
            .long(0x0004, 1, littleEndian: littleEndian, type: 9),            // AEStable
            IFDEntry(tag: 0x0008, type: 10, count: 3,                         // AccelerationVector, rational64s[3]
                     value: (0..<6).flatMap { u32(UInt32($0 + 1), littleEndian: littleEndian) }),
            .ascii(0x000B, "1C5B7D6E-3A2F-4B1C-9D8E-7F6A5B4C3D2E"),          // BurstUUID: a decoy string
            .long(0x0014, 5, littleEndian: littleEndian, type: 9),
        ]
        if let identifier {
            entries.append(.ascii(0x0011, identifier))
        }
        return ascii("Apple iOS\0") + [0x00, 0x01] + ascii(littleEndian ? "II" : "MM")
            + ifd(entries, placedAt: 14, littleEndian: littleEndian)
    }

    /// A TIFF structure as found after "Exif\0\0": IFD0 (Make, Model,
    /// Orientation, Exif IFD pointer) and an Exif IFD holding `makerNote`.
    static func exifTIFF(makerNote: [UInt8]?, littleEndian: Bool = false) -> [UInt8] {
        func ifd0(exifIFDAt offset: UInt32) -> [UInt8] {
            ifd([
                .ascii(0x010F, "Apple"),
                .ascii(0x0110, "iPhone 15 Pro"),
                IFDEntry(tag: 0x0112, type: 3, count: 1, value: u16(1, littleEndian: littleEndian)),
                .long(0x8769, offset, littleEndian: littleEndian),
            ], placedAt: 8, littleEndian: littleEndian)
        }
        let exifIFDAt = 8 + ifd0(exifIFDAt: 0).count
        var exifEntries: [IFDEntry] = [
            IFDEntry(tag: 0x829A, type: 5, count: 1, value: u32(1, littleEndian: littleEndian) + u32(120, littleEndian: littleEndian)),
            .ascii(0x9003, "2024:06:01 12:34:56"),
        ]
        if let makerNote {
            exifEntries.append(IFDEntry(tag: 0x927C, type: 7, count: UInt32(makerNote.count), value: makerNote))
        }
        return ascii(littleEndian ? "II" : "MM") + u16(42, littleEndian: littleEndian) + u32(8, littleEndian: littleEndian)
            + ifd0(exifIFDAt: UInt32(exifIFDAt))
            + ifd(exifEntries, placedAt: exifIFDAt, littleEndian: littleEndian)
    }

    /// The TIFF of an iPhone photo with (or without) the content identifier.
    static func appleTIFF(identifier: String?, littleEndian: Bool = false) -> [UInt8] {
        exifTIFF(makerNote: appleMakerNote(identifier: identifier), littleEndian: littleEndian)
    }

    // MARK: - JPEG

    static func jpegSegment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + be16(UInt16(payload.count + 2)) + payload
    }

    /// SOI, [APP0 JFIF], APP1 Exif (`tiff`), APP1 XMP, DQT, SOF0, SOS, scan data, EOI.
    static func jpeg(tiff: [UInt8], leadingJFIF: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        if leadingJFIF {
            bytes += jpegSegment(0xE0, ascii("JFIF\0") + [1, 1, 0, 0, 72, 0, 72, 0, 0])
            bytes += [0xFF] // a fill byte before the next marker is legal
        }
        bytes += jpegSegment(0xE1, ascii("Exif\0\0") + tiff)
        bytes += jpegSegment(0xE1, ascii("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"))
        bytes += jpegSegment(0xDB, [0] + Array(repeating: 1, count: 64))
        bytes += jpegSegment(0xC0, [8, 0, 16, 0, 16, 1, 1, 0x11, 0])
        bytes += jpegSegment(0xDA, [1, 1, 0, 0, 63, 0])
        bytes += [0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD0, 0x78] // entropy-coded data with stuffing and RST0
        return bytes + [0xFF, 0xD9]
    }

    static func jpeg(identifier: String?, littleEndian: Bool = false, leadingJFIF: Bool = false) -> [UInt8] {
        jpeg(tiff: appleTIFF(identifier: identifier, littleEndian: littleEndian), leadingJFIF: leadingJFIF)
    }

    // MARK: - HEIC

    struct HEICOptions: Sendable {
        var iinfVersion: UInt8 = 0
        var infeVersion: UInt8 = 2
        var ilocVersion: UInt8 = 1
        /// Bytes of iloc offsets and lengths: 4 or 8.
        var fieldSize: Int = 4
        /// Non-zero: iloc carries a base offset of this size (4 or 8) and extents are relative to it.
        var baseOffsetSize: Int = 0
        /// Store the Exif item in `idat` (construction method 1) instead of `mdat`.
        var exifInIdat = false
        /// Split the Exif item into two extents.
        var splitExif = false
        /// Test hooks for hostile input: replace a box's payload wholesale.
        var iinfPayloadOverride: [UInt8]?
        var ilocPayloadOverride: [UInt8]?
    }

    /// The Exif item: u32 exif_tiff_header_offset (6) + "Exif\0\0" + TIFF.
    static func heifExifItem(tiff: [UInt8]) -> [UInt8] {
        be32(6) + ascii("Exif\0\0") + tiff
    }

    /// ftyp, meta{hdlr pict, pitm, iinf{infe hvc1, infe Exif}, iloc, [idat], iprp}, mdat.
    static func heic(identifier: String?, options: HEICOptions = HEICOptions()) -> [UInt8] {
        heic(exifItem: heifExifItem(tiff: appleTIFF(identifier: identifier)), options: options)
    }

    static func heic(exifItem: [UInt8], options: HEICOptions = HEICOptions()) -> [UInt8] {
        let ftyp = box("ftyp", ascii("heic") + be32(0) + ascii("mif1") + ascii("heic"))
        let image = (0..<96).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

        func meta(mdatPayloadAt mdatStart: Int) -> [UInt8] {
            let v = options.ilocVersion
            func uint(_ value: Int, size: Int) -> [UInt8] {
                size == 8 ? be64(UInt64(value)) : size == 4 ? be32(UInt32(value)) : []
            }
            let base = options.baseOffsetSize > 0 ? mdatStart : 0
            func item(id: Int, method: UInt16, base: Int, extents: [(Int, Int)]) -> [UInt8] {
                var bytes = v < 2 ? be16(UInt16(id)) : be32(UInt32(id))
                if v >= 1 { bytes += be16(method) }
                bytes += be16(0) // data_reference_index
                bytes += uint(base, size: options.baseOffsetSize)
                bytes += be16(UInt16(extents.count))
                for (offset, length) in extents {
                    bytes += uint(offset, size: options.fieldSize) + uint(length, size: options.fieldSize)
                }
                return bytes
            }
            let imageOffset = mdatStart - base
            let exifExtents: [(Int, Int)]
            let exifBase = options.exifInIdat ? 0 : base
            let exifStart = options.exifInIdat ? 0 : mdatStart + image.count - base
            if options.splitExif {
                let half = exifItem.count / 2
                exifExtents = [(exifStart, half), (exifStart + half, exifItem.count - half)]
            } else {
                exifExtents = [(exifStart, exifItem.count)]
            }
            var ilocPayload = [UInt8(options.fieldSize << 4 | options.fieldSize), UInt8(options.baseOffsetSize << 4)]
            ilocPayload += v < 2 ? be16(2) : be32(2)
            ilocPayload += item(id: 1, method: 0, base: base, extents: [(imageOffset, image.count)])
            ilocPayload += item(id: 2, method: options.exifInIdat ? 1 : 0, base: exifBase, extents: exifExtents)

            func infe(id: Int, type: String, hidden: Bool) -> [UInt8] {
                let idBytes = options.infeVersion == 2 ? be16(UInt16(id)) : be32(UInt32(id))
                return fullBox("infe", version: options.infeVersion, flags: hidden ? 1 : 0, idBytes + be16(0) + ascii(type) + [0])
            }
            let iinfPayload = (options.iinfVersion == 0 ? be16(2) : be32(2))
                + infe(id: 1, type: "hvc1", hidden: false) + infe(id: 2, type: "Exif", hidden: true)

            var children = fullBox("hdlr", version: 0, be32(0) + ascii("pict") + Array(repeating: 0, count: 12) + [0])
            children += fullBox("pitm", version: 0, be16(1))
            children += options.iinfPayloadOverride.map { box("iinf", $0) }
                ?? fullBox("iinf", version: options.iinfVersion, iinfPayload)
            children += options.ilocPayloadOverride.map { box("iloc", $0) }
                ?? fullBox("iloc", version: v, ilocPayload)
            if options.exifInIdat {
                children += box("idat", exifItem)
            }
            children += box("iprp", box("ipco", fullBox("ispe", version: 0, be32(4032) + be32(3024))))
            return fullBox("meta", version: 0, children)
        }

        let metaSize = meta(mdatPayloadAt: 0).count
        let mdatPayloadAt = ftyp.count + metaSize + 8
        let mdat = box("mdat", image + (options.exifInIdat ? [] : exifItem))
        return ftyp + meta(mdatPayloadAt: mdatPayloadAt) + mdat
    }

    // MARK: - MOV

    struct MOVOptions: Sendable {
        /// ISO style `meta` (FullBox) instead of QuickTime style (no version/flags).
        var metaHasVersionFlags = false
        /// `moov` before `mdat` ("fast start") instead of after it, as iOS writes.
        var moovFirst = false
        /// Write `mdat` with a 64-bit largesize header.
        var largeMdat = false
        /// Type indicator of the identifier's `data` box (1 = UTF-8).
        var dataType: UInt32 = 1
        /// Bytes of "video" in `mdat`: more than a read buffer makes a file the scanner
        /// cannot parse from the bytes it hashed.
        var sampleBytes = 600
        /// Test hooks for hostile input.
        var keysPayloadOverride: [UInt8]?
        var ilstPayloadOverride: [UInt8]?
    }

    static let movKeys = [
        "com.apple.quicktime.location.accuracy.horizontal",
        "com.apple.quicktime.live-photo.auto",
        "com.apple.quicktime.content.identifier",
        "com.apple.quicktime.live-photo.vitality-score",
        "com.apple.quicktime.location.ISO6709",
        "com.apple.quicktime.make",
        "com.apple.quicktime.model",
        "com.apple.quicktime.software",
        "com.apple.quicktime.creationdate",
    ]

    /// The payload of moov/meta: [version/flags], hdlr mdta, keys, ilst.
    static func movMeta(identifier: String?, options: MOVOptions = MOVOptions()) -> [UInt8] {
        let keyNames = identifier == nil ? movKeys.filter { $0 != "com.apple.quicktime.content.identifier" } : movKeys
        var keysPayload = be32(0) + be32(UInt32(keyNames.count))
        for key in keyNames {
            keysPayload += be32(UInt32(8 + key.utf8.count)) + ascii("mdta") + ascii(key)
        }
        var ilstPayload: [UInt8] = []
        for (offset, key) in keyNames.enumerated() {
            let value: [UInt8]
            var type: UInt32 = 1
            switch key {
            case "com.apple.quicktime.content.identifier":
                value = ascii(identifier ?? "")
                type = options.dataType
            case "com.apple.quicktime.live-photo.auto":
                value = [1]
                type = 75 // 8-bit unsigned integer
            case "com.apple.quicktime.location.accuracy.horizontal":
                value = ascii("4.9")
            default:
                value = ascii("value of \(key)")
            }
            ilstPayload += box(typeCode: UInt32(offset + 1), box("data", be32(type) + be32(0) + value))
        }
        let children = fullBox("hdlr", version: 0, be32(0) + ascii("mdta") + Array(repeating: 0, count: 12) + [0])
            + box("keys", options.keysPayloadOverride ?? keysPayload)
            + box("ilst", options.ilstPayloadOverride ?? ilstPayload)
        return (options.metaHasVersionFlags ? be32(0) : []) + children
    }

    /// ftyp qt, wide, mdat, moov{mvhd, trak{tkhd, mdia{hdlr vide}}, meta} — moov last unless `moovFirst`.
    static func mov(identifier: String?, options: MOVOptions = MOVOptions()) -> [UInt8] {
        let ftyp = box("ftyp", ascii("qt  ") + be32(0) + ascii("qt  "))
        let samples = (0..<options.sampleBytes).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) }
        let mdat = options.largeMdat ? largeBox("mdat", samples) : box("mdat", samples)
        let trak = box("trak",
                       fullBox("tkhd", version: 0, Array(repeating: 0, count: 80))
                       + box("mdia", fullBox("hdlr", version: 0, ascii("mhlr") + ascii("vide") + Array(repeating: 0, count: 12) + [0])))
        let moov = box("moov",
                       fullBox("mvhd", version: 0, Array(repeating: 0, count: 96))
                       + trak
                       + box("meta", movMeta(identifier: identifier, options: options)))
        let wide = box("wide", [])
        return options.moovFirst ? ftyp + wide + moov + mdat : ftyp + wide + mdat + moov
    }

    // MARK: - Files

    /// A fresh empty directory under the system temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("lfsync-media-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @discardableResult
    static func write(_ bytes: [UInt8], named name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }
}
