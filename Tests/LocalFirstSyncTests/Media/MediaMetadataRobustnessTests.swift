import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncSystem

/// Malformed input must end in nil or a thrown `MediaMetadataError`, never a
/// trap, a hang or an unbounded allocation.
@Suite("Apple content identifier: truncated, corrupted and hostile input", .timeLimit(.minutes(2)))
struct MediaMetadataRobustnessTests {
    typealias Reader = AppleContentIdentifierReader
    let id = MediaFixtures.identifier

    /// The pure API's outcome, with errors folded into nil.
    static func outcome(_ bytes: [UInt8]) -> String? {
        (try? Reader.contentIdentifier(in: bytes)) ?? nil
    }

    static let fixtures: [(name: String, bytes: [UInt8])] = {
        var isoMeta = MediaFixtures.MOVOptions()
        isoMeta.metaHasVersionFlags = true
        var idat = MediaFixtures.HEICOptions()
        idat.exifInIdat = true
        idat.ilocVersion = 2
        return [
            ("heic", MediaFixtures.heic(identifier: MediaFixtures.identifier)),
            ("heic-idat", MediaFixtures.heic(identifier: MediaFixtures.identifier, options: idat)),
            ("jpeg", MediaFixtures.jpeg(identifier: MediaFixtures.identifier)),
            ("jpeg-le", MediaFixtures.jpeg(identifier: MediaFixtures.identifier, littleEndian: true, leadingJFIF: true)),
            ("mov", MediaFixtures.mov(identifier: MediaFixtures.identifier)),
            ("mov-iso-meta", MediaFixtures.mov(identifier: MediaFixtures.identifier, options: isoMeta)),
        ]
    }()

    @Test("Every prefix of every fixture yields nil or the right identifier")
    func everyPrefix() {
        for fixture in Self.fixtures {
            #expect(Self.outcome(fixture.bytes) == id, "\(fixture.name) intact")
            for length in 0..<fixture.bytes.count {
                let result = Self.outcome(Array(fixture.bytes.prefix(length)))
                #expect(result == nil || result == id, "\(fixture.name) cut at \(length)")
            }
        }
    }

    @Test("Seeded random corruption never crashes", arguments: [UInt64(1), 2, 3])
    func randomCorruption(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for iteration in 0..<1500 {
            let fixture = Self.fixtures[Int.random(in: 0..<Self.fixtures.count, using: &random)]
            let bytes = Self.corrupt(fixture.bytes, using: &random)
            let result = Self.outcome(bytes)
            #expect((result?.utf8.count ?? 0) <= MediaMetadataLimits.maxIdentifierBytes, "seed \(seed) iteration \(iteration) (\(fixture.name))")
        }
    }

    @Test("Corrupted files read through the file API never crash")
    func corruptedFiles() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix64(seed: 42)
        let names = ["heic": "a.heic", "heic-idat": "b.heif", "jpeg": "c.jpg", "jpeg-le": "d.jpeg", "mov": "e.mov", "mov-iso-meta": "f.mp4"]
        for iteration in 0..<120 {
            let fixture = Self.fixtures[iteration % Self.fixtures.count]
            let name = names[fixture.name] ?? "x.mov"
            let url = try MediaFixtures.write(Self.corrupt(fixture.bytes, using: &random), named: name, in: directory)
            let fromFile = Reader.contentIdentifier(ofFileAt: url)
            let fromBytes = Self.outcome(Array(try Data(contentsOf: url)))
            #expect(fromFile == fromBytes, "file and byte paths agree (\(fixture.name), iteration \(iteration))")
        }
    }

    /// One to eight mutations: bit flips, byte overwrites with boundary values,
    /// 32-bit field smashes, deletions, insertions and truncation.
    static func corrupt(_ original: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            guard !bytes.isEmpty else { break }
            let position = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1:
                bytes[position] = [0x00, 0x01, 0x7F, 0x80, 0xFF].randomElement(using: &random) ?? 0
            case 2:
                let smash: [UInt8] = [[0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0], [0, 0, 0, 1], [0x7F, 0xFF, 0xFF, 0xF0]]
                    .randomElement(using: &random) ?? []
                for (step, byte) in smash.enumerated() where position + step < bytes.count {
                    bytes[position + step] = byte
                }
            case 3:
                bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...16, using: &random)))
            case 4:
                bytes.insert(contentsOf: (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: position)
            default:
                bytes.removeSubrange(position...)
            }
        }
        return bytes
    }

    // MARK: Hostile ISOBMFF

    @Test("Hostile box sizes: 0, 1 with tiny or huge largesize, below the header, beyond EOF")
    func hostileBoxSizes() {
        let ftyp = MediaFixtures.box("ftyp", MediaFixtures.ascii("qt  ") + MediaFixtures.be32(0))
        let cases: [[UInt8]] = [
            ftyp + MediaFixtures.be32(0) + MediaFixtures.ascii("moov") + Array(repeating: 0xAB, count: 40),
            ftyp + MediaFixtures.be32(1) + MediaFixtures.ascii("mdat") + MediaFixtures.be64(.max),
            ftyp + MediaFixtures.be32(1) + MediaFixtures.ascii("mdat") + MediaFixtures.be64(8),
            ftyp + MediaFixtures.be32(1) + MediaFixtures.ascii("mdat") + MediaFixtures.be64(1 << 62) + Array(repeating: 0, count: 64),
            ftyp + MediaFixtures.be32(4) + MediaFixtures.ascii("moov") + Array(repeating: 0, count: 64),
            ftyp + MediaFixtures.be32(0xFFFF_FFFF) + MediaFixtures.ascii("moov") + Array(repeating: 0, count: 64),
            ftyp + MediaFixtures.box("moov", MediaFixtures.be32(0xFFFF_FFF0) + MediaFixtures.ascii("meta")),
            ftyp + MediaFixtures.box("meta", [0, 0, 0, 0] + MediaFixtures.be32(1) + MediaFixtures.ascii("iinf")),
            ftyp + MediaFixtures.box("moov", MediaFixtures.box("meta", [])),
            ftyp + MediaFixtures.box("meta", []),
        ]
        for (index, bytes) in cases.enumerated() {
            #expect(Self.outcome(bytes) == nil, "case \(index)")
        }
    }

    @Test("Many tiny boxes and deep nesting end quickly")
    func manyBoxesAndDeepNesting() {
        let ftyp = MediaFixtures.box("ftyp", MediaFixtures.ascii("isom") + MediaFixtures.be32(0))
        let flood = ftyp + Array((0..<100_000).map { _ in MediaFixtures.box("free", []) }.joined())
            + MediaFixtures.box("moov", MediaFixtures.box("meta", MediaFixtures.movMeta(identifier: id)))
        #expect(Self.outcome(flood) == nil)
        #expect(throws: MediaMetadataError.self) { try Reader.contentIdentifier(in: flood) }

        // 20 000 levels of moov inside moov (and meta inside meta): only fixed paths are followed.
        for type in ["moov", "meta"] {
            var nested = MediaFixtures.box(type, MediaFixtures.box("meta", MediaFixtures.movMeta(identifier: id)))
            for _ in 0..<20_000 {
                var wrapped = MediaFixtures.be32(UInt32(8 + nested.count)) + MediaFixtures.ascii(type)
                wrapped += nested
                nested = wrapped
            }
            #expect(Self.outcome(ftyp + nested) == nil, "nested \(type)")
        }
    }

    @Test("Hostile iinf and iloc: huge counts, huge extents, offsets beyond EOF")
    func hostileHEIF() {
        let be16 = MediaFixtures.be16, be32 = MediaFixtures.be32, be64 = MediaFixtures.be64
        let exifInfe = MediaFixtures.fullBox("infe", version: 2, be16(2) + be16(0) + MediaFixtures.ascii("Exif") + [0])
        func heic(iinf: [UInt8]? = nil, iloc: [UInt8]? = nil) -> [UInt8] {
            var options = MediaFixtures.HEICOptions()
            options.iinfPayloadOverride = iinf
            options.ilocPayloadOverride = iloc
            return MediaFixtures.heic(identifier: id, options: options)
        }
        func iloc(version: UInt8, sizes: [UInt8], count: [UInt8], items: [UInt8]) -> [UInt8] {
            [version, 0, 0, 0] + sizes + count + items
        }
        let cases: [(String, [UInt8])] = [
            ("iinf count 2^32-1, no entries", heic(iinf: [1, 0, 0, 0] + be32(.max))),
            ("iinf entry box beyond its parent", heic(iinf: [0, 0, 0, 0] + be16(1) + be32(0xFFFF) + MediaFixtures.ascii("infe"))),
            ("iinf with an infe cut short", heic(iinf: [0, 0, 0, 0] + be16(1) + MediaFixtures.box("infe", [2, 0, 0, 0, 0]))),
            ("iloc item count 2^32-1", heic(iloc: iloc(version: 2, sizes: [0x44, 0x00], count: be32(.max), items: []))),
            ("iloc item count 65535, no items", heic(iloc: iloc(version: 1, sizes: [0x44, 0x00], count: be16(.max), items: []))),
            ("iloc extent count 65535", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                             iloc: iloc(version: 0, sizes: [0x44, 0x00], count: be16(1), items: be16(2) + be16(0) + be16(.max)))),
            ("iloc extent length 2^64-1", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                               iloc: iloc(version: 0, sizes: [0x88, 0x00], count: be16(1),
                                                          items: be16(2) + be16(0) + be16(1) + be64(0) + be64(.max)))),
            ("iloc offset beyond EOF", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                            iloc: iloc(version: 0, sizes: [0x44, 0x00], count: be16(1),
                                                       items: be16(2) + be16(0) + be16(1) + be32(0xFFFF_0000) + be32(64)))),
            ("iloc base + offset overflows", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                                  iloc: iloc(version: 1, sizes: [0x88, 0x80], count: be16(1),
                                                             items: be16(2) + be16(0) + be16(0) + be64(.max) + be16(1) + be64(16) + be64(16)))),
            ("iloc field size 3", heic(iloc: iloc(version: 1, sizes: [0x33, 0x00], count: be16(0), items: []))),
            ("iloc version 3", heic(iloc: iloc(version: 3, sizes: [0x44, 0x00], count: be16(0), items: []))),
            ("iloc idat method without idat", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                                   iloc: iloc(version: 1, sizes: [0x44, 0x00], count: be16(1),
                                                              items: be16(2) + be16(1) + be16(0) + be16(1) + be32(0) + be32(16)))),
            ("iloc zero extents", heic(iinf: [0, 0, 0, 0] + be16(1) + exifInfe,
                                       iloc: iloc(version: 0, sizes: [0x44, 0x00], count: be16(1), items: be16(2) + be16(0) + be16(0)))),
            ("Exif item header offset 2^32-1", MediaFixtures.heic(exifItem: be32(.max) + MediaFixtures.appleTIFF(identifier: id))),
        ]
        for (name, bytes) in cases {
            #expect(Self.outcome(bytes) == nil, "\(name)")
        }
    }

    // MARK: Hostile TIFF and JPEG

    @Test("Hostile TIFF: huge IFD counts, wild offsets, oversized MakerNote and identifier")
    func hostileTIFF() {
        let be16 = MediaFixtures.be16, be32 = MediaFixtures.be32
        func entry(_ tag: UInt16, _ type: UInt16, _ count: UInt32, _ value: UInt32) -> [UInt8] {
            be16(tag) + be16(type) + be32(count) + be32(value)
        }
        let header = MediaFixtures.ascii("MM") + be16(42) + be32(8)
        let apple = MediaFixtures.ascii("Apple iOS\0") + [0, 1] + MediaFixtures.ascii("MM")
        let tiffs: [(String, [UInt8])] = [
            ("IFD0 count 65535", header + be16(.max)),
            ("IFD0 offset 2^32-1", MediaFixtures.ascii("MM") + be16(42) + be32(.max)),
            ("Exif pointer 2^32-1", header + be16(1) + entry(0x8769, 4, 1, .max) + be32(0)),
            ("Exif pointer to itself", header + be16(1) + entry(0x8769, 4, 1, 8) + be32(0)),
            ("Exif pointer with count 2", header + be16(1) + entry(0x8769, 4, 2, 26) + be32(0)),
            ("MakerNote count 2^32-1", header + be16(1) + entry(0x8769, 4, 1, 26) + be32(0)
                + be16(1) + entry(0x927C, 7, .max, 44) + be32(0)),
            ("MakerNote offset 2^32-16", header + be16(1) + entry(0x8769, 4, 1, 8) + be32(0)
                + be16(1) + entry(0x927C, 7, 64, 0xFFFF_FFF0) + be32(0)),
            ("bad magic", MediaFixtures.ascii("MM") + be16(43) + be32(8)),
            ("bad byte order", MediaFixtures.ascii("XX") + be16(42) + be32(8)),
        ]
        for (name, tiff) in tiffs {
            #expect(Self.outcome(MediaFixtures.jpeg(tiff: tiff)) == nil, "\(name)")
        }

        let makerNotes: [(String, [UInt8])] = [
            ("identifier count 2^32-1", apple + be16(1) + entry(0x0011, 2, .max, 32) + be32(0)),
            ("identifier longer than the cap", apple + be16(1) + entry(0x0011, 2, 4096, 32) + be32(0) + Array(repeating: 0x41, count: 4096)),
            ("identifier offset beyond the data", apple + be16(1) + entry(0x0011, 2, 37, 0xFFFF_FF00) + be32(0)),
            ("identifier of type SHORT", apple + be16(1) + entry(0x0011, 3, 2, 0x4142_4344) + be32(0)),
            ("identifier of unknown type", apple + be16(1) + entry(0x0011, 99, 1, 0) + be32(0)),
            ("identifier not UTF-8", apple + be16(1) + entry(0x0011, 2, 4, 0xC3FF_FE00) + be32(0)),
            ("IFD count 65535", apple + be16(.max)),
            ("no byte order", MediaFixtures.ascii("Apple iOS\0") + [0, 1] + MediaFixtures.ascii("XX") + be16(0)),
            ("header only", MediaFixtures.ascii("Apple iOS\0") + [0, 1]),
        ]
        for (name, note) in makerNotes {
            let bytes = MediaFixtures.jpeg(tiff: MediaFixtures.exifTIFF(makerNote: note))
            #expect(Self.outcome(bytes) == nil, "\(name)")
        }
    }

    @Test("Hostile JPEG: segments beyond EOF, bad lengths, floods of segments and fill bytes")
    func hostileJPEG() {
        let exifAPP1 = MediaFixtures.jpegSegment(0xE1, MediaFixtures.ascii("Exif\0\0") + MediaFixtures.appleTIFF(identifier: id))
        let cases: [(String, [UInt8])] = [
            ("APP1 length beyond EOF", [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xF0] + MediaFixtures.ascii("Exif\0\0MM")),
            ("segment length 0", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00] + exifAPP1),
            ("segment length 1", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01] + exifAPP1),
            ("no marker after SOI", [0xFF, 0xD8, 0x12, 0x34] + exifAPP1),
            ("SOI again", [0xFF, 0xD8, 0xFF, 0xD8] + exifAPP1),
            ("fill-byte flood", [0xFF, 0xD8] + Array(repeating: 0xFF, count: 100_000) + exifAPP1.dropFirst()),
            ("segment flood", [0xFF, 0xD8] + Array((0..<5000).map { _ in MediaFixtures.jpegSegment(0xE2, [1, 2]) }.joined()) + exifAPP1),
            ("Exif after SOS", [0xFF, 0xD8] + MediaFixtures.jpegSegment(0xDA, [0]) + exifAPP1),
            ("only SOI", [0xFF, 0xD8, 0xFF]),
        ]
        for (name, bytes) in cases {
            #expect(Self.outcome(bytes) == nil, "\(name)")
        }
    }

    // MARK: Hostile QuickTime metadata

    @Test("Hostile keys and ilst: huge counts, zero and huge key sizes, values beyond their box")
    func hostileQuickTime() {
        let be32 = MediaFixtures.be32
        let key = MediaFixtures.ascii("com.apple.quicktime.content.identifier")
        let goodKeys = be32(0) + be32(1) + be32(UInt32(8 + key.count)) + MediaFixtures.ascii("mdta") + key
        func mov(keys: [UInt8]? = nil, ilst: [UInt8]? = nil) -> [UInt8] {
            var options = MediaFixtures.MOVOptions()
            options.keysPayloadOverride = keys
            options.ilstPayloadOverride = ilst
            return MediaFixtures.mov(identifier: id, options: options)
        }
        let cases: [(String, [UInt8])] = [
            ("keys count 2^32-1", mov(keys: be32(0) + be32(.max))),
            ("keys count 4096 with no entries", mov(keys: be32(0) + be32(4096))),
            ("key size 0", mov(keys: be32(0) + be32(1) + be32(0) + MediaFixtures.ascii("mdta"))),
            ("key size 2^32-1", mov(keys: be32(0) + be32(1) + be32(.max) + MediaFixtures.ascii("mdta") + key)),
            ("keys cut short", mov(keys: be32(0))),
            ("ilst item beyond its parent", mov(keys: goodKeys, ilst: be32(0xFFFF) + be32(1))),
            ("data box beyond its item", mov(keys: goodKeys, ilst: MediaFixtures.box(typeCode: 1, be32(0xFFFF) + MediaFixtures.ascii("data")))),
            ("data box too short", mov(keys: goodKeys, ilst: MediaFixtures.box(typeCode: 1, MediaFixtures.box("data", [0, 0, 0, 1])))),
            ("empty value", mov(keys: goodKeys, ilst: MediaFixtures.box(typeCode: 1, MediaFixtures.box("data", be32(1) + be32(0))))),
            ("value over the cap", mov(keys: goodKeys, ilst: MediaFixtures.box(typeCode: 1,
                                       MediaFixtures.box("data", be32(1) + be32(0) + Array(repeating: 0x41, count: 1000)))))
        ]
        for (name, bytes) in cases {
            #expect(Self.outcome(bytes) == nil, "\(name)")
        }
    }
}
