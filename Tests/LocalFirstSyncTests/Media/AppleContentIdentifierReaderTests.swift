import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent

@Suite("Apple content identifier: well-formed files")
struct AppleContentIdentifierReaderTests {
    typealias Reader = AppleContentIdentifierReader
    let id = MediaFixtures.identifier

    // MARK: JPEG

    @Test("JPEG: identifier from the Apple MakerNote", arguments: [false, true], [false, true])
    func jpeg(littleEndianTIFF: Bool, leadingJFIF: Bool) throws {
        let bytes = MediaFixtures.jpeg(identifier: id, littleEndian: littleEndianTIFF, leadingJFIF: leadingJFIF)
        #expect(try Reader.contentIdentifier(in: bytes) == id)
        #expect(try Reader.contentIdentifier(in: bytes, format: .jpeg) == id)
    }

    @Test("JPEG: little-endian Apple MakerNote")
    func jpegLittleEndianMakerNote() throws {
        let tiff = MediaFixtures.exifTIFF(makerNote: MediaFixtures.appleMakerNote(identifier: id, littleEndian: true))
        #expect(try Reader.contentIdentifier(in: MediaFixtures.jpeg(tiff: tiff)) == id)
    }

    @Test("JPEG without identifier, without MakerNote, or with another vendor's MakerNote yields nil")
    func jpegWithoutIdentifier() throws {
        #expect(try Reader.contentIdentifier(in: MediaFixtures.jpeg(identifier: nil)) == nil)
        #expect(try Reader.contentIdentifier(in: MediaFixtures.jpeg(tiff: MediaFixtures.exifTIFF(makerNote: nil))) == nil)
        let canon = MediaFixtures.exifTIFF(makerNote: Array(repeating: 0x41, count: 40))
        #expect(try Reader.contentIdentifier(in: MediaFixtures.jpeg(tiff: canon)) == nil)
    }

    @Test("Trailing NULs and padding after the identifier are stripped")
    func strippedNULs() throws {
        let tiff = MediaFixtures.exifTIFF(makerNote: MediaFixtures.appleMakerNote(identifier: id + "\0\0\0"))
        #expect(try Reader.contentIdentifier(in: MediaFixtures.jpeg(tiff: tiff)) == id)
    }

    // MARK: HEIC

    static let heicVariants: [MediaFixtures.HEICOptions] = {
        var variants: [MediaFixtures.HEICOptions] = []
        for iinfVersion: UInt8 in [0, 1] {
            for infeVersion: UInt8 in [2, 3] {
                for ilocVersion: UInt8 in [0, 1, 2] {
                    for fieldSize in [4, 8] {
                        var options = MediaFixtures.HEICOptions()
                        options.iinfVersion = iinfVersion
                        options.infeVersion = infeVersion
                        options.ilocVersion = ilocVersion
                        options.fieldSize = fieldSize
                        variants.append(options)
                    }
                }
            }
        }
        var based = MediaFixtures.HEICOptions()
        based.baseOffsetSize = 4
        variants.append(based)
        based.baseOffsetSize = 8
        based.ilocVersion = 2
        variants.append(based)
        var idat = MediaFixtures.HEICOptions()
        idat.exifInIdat = true
        variants.append(idat)
        var split = MediaFixtures.HEICOptions()
        split.splitExif = true
        variants.append(split)
        idat.splitExif = true
        idat.ilocVersion = 2
        variants.append(idat)
        return variants
    }()

    @Test("HEIC: identifier from the Exif item, across box versions and iloc layouts", arguments: heicVariants)
    func heic(options: MediaFixtures.HEICOptions) throws {
        let bytes = MediaFixtures.heic(identifier: id, options: options)
        #expect(try Reader.contentIdentifier(in: bytes) == id)
        #expect(try Reader.contentIdentifier(in: MediaFixtures.heic(identifier: nil, options: options)) == nil)
    }

    @Test("HEIC: an Exif item whose header offset does not cover \"Exif\\0\\0\" still reads")
    func heicExifOffsetZero() throws {
        let item = MediaFixtures.be32(0) + MediaFixtures.ascii("Exif\0\0") + MediaFixtures.appleTIFF(identifier: id)
        #expect(try Reader.contentIdentifier(in: MediaFixtures.heic(exifItem: item)) == id)
        let bare = MediaFixtures.be32(0) + MediaFixtures.appleTIFF(identifier: id)
        #expect(try Reader.contentIdentifier(in: MediaFixtures.heic(exifItem: bare)) == id)
    }

    // MARK: MOV

    static let movVariants: [MediaFixtures.MOVOptions] = {
        var variants: [MediaFixtures.MOVOptions] = []
        for versionFlags in [false, true] {
            for moovFirst in [false, true] {
                for largeMdat in [false, true] {
                    var options = MediaFixtures.MOVOptions()
                    options.metaHasVersionFlags = versionFlags
                    options.moovFirst = moovFirst
                    options.largeMdat = largeMdat
                    variants.append(options)
                }
            }
        }
        return variants
    }()

    @Test("MOV: identifier from moov/meta keys + ilst, meta with and without version/flags", arguments: movVariants)
    func mov(options: MediaFixtures.MOVOptions) throws {
        #expect(try Reader.contentIdentifier(in: MediaFixtures.mov(identifier: id, options: options)) == id)
        #expect(try Reader.contentIdentifier(in: MediaFixtures.mov(identifier: nil, options: options)) == nil)
    }

    @Test("MOV: a non-text data type is not taken for the identifier")
    func movBinaryValue() throws {
        var options = MediaFixtures.MOVOptions()
        options.dataType = 0
        #expect(try Reader.contentIdentifier(in: MediaFixtures.mov(identifier: id, options: options)) == nil)
    }

    // MARK: Other formats

    @Test("Unrecognised formats yield nil")
    func otherFormats() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64)
        #expect(try Reader.contentIdentifier(in: png) == nil)
        #expect(try Reader.contentIdentifier(in: Array("just some text, no magic".utf8)) == nil)
        #expect(try Reader.contentIdentifier(in: []) == nil)
        #expect(try Reader.contentIdentifier(in: [0xFF]) == nil)
    }

    @Test("Format sniffing ignores extensions: HEIC bytes are recognised as ISOBMFF")
    func sniffing() {
        #expect(MediaContainerFormat.sniff(MediaFixtures.heic(identifier: id)) == .isoBaseMedia)
        #expect(MediaContainerFormat.sniff(MediaFixtures.mov(identifier: id)) == .isoBaseMedia)
        #expect(MediaContainerFormat.sniff(MediaFixtures.jpeg(identifier: id)) == .jpeg)
        #expect(MediaContainerFormat.sniff([0, 0, 0, 4] + MediaFixtures.ascii("ftyp")) == nil)
    }

    // MARK: Files on disk

    @Test("Files: each format reads through the file API, whatever its extension says")
    func files() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let heic = try MediaFixtures.write(MediaFixtures.heic(identifier: id), named: "IMG_0001.HEIC", in: directory)
        let jpeg = try MediaFixtures.write(MediaFixtures.jpeg(identifier: id), named: "IMG_0002.jpg", in: directory)
        let mov = try MediaFixtures.write(MediaFixtures.mov(identifier: id), named: "IMG_0001.MOV", in: directory)
        let mislabelled = try MediaFixtures.write(MediaFixtures.heic(identifier: id), named: "IMG_0003.JPG", in: directory)
        let plain = try MediaFixtures.write(MediaFixtures.mov(identifier: nil), named: "clip.mp4", in: directory)
        #expect(Reader.contentIdentifier(ofFileAt: heic) == id)
        #expect(Reader.contentIdentifier(ofFileAt: jpeg) == id)
        #expect(Reader.contentIdentifier(ofFileAt: mov) == id)
        #expect(Reader.contentIdentifier(ofFileAt: mislabelled) == id)
        #expect(Reader.contentIdentifier(ofFileAt: plain) == nil)
    }

    @Test("A scanner's borrowed buffer gives what the file gives: identifier, nil, or the extension's veto")
    func borrowedBytesAgreeWithTheFile() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(name: String, bytes: [UInt8], expected: String?)] = [
            ("IMG_0001.HEIC", MediaFixtures.heic(identifier: id), id),
            ("IMG_0002.jpg", MediaFixtures.jpeg(identifier: id), id),
            ("IMG_0001.MOV", MediaFixtures.mov(identifier: id), id),
            ("clip.mp4", MediaFixtures.mov(identifier: nil), nil),
            ("notes.txt", MediaFixtures.heic(identifier: id), nil),
            ("cut.heic", Array(MediaFixtures.heic(identifier: id).prefix(40)), nil),
            ("empty.jpg", [], nil),
        ]
        for (name, bytes, expected) in cases {
            let url = try MediaFixtures.write(bytes, named: name, in: directory)
            let borrowed = bytes.withUnsafeBytes { Reader.contentIdentifier(path: url.path, wholeFile: $0) }
            #expect(borrowed == expected, "\(name)")
            #expect(borrowed == Reader.contentIdentifier(ofFileAt: url), "\(name)")
        }
    }

    @Test("The digester lends a file's bytes only when one read brought all of them, and only those hashed")
    func digesterLendsOnlyWholeFiles() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let digester = FileDigester(bufferSize: 4096)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: digester.bufferSize, alignment: 64)
        defer { buffer.deallocate() }
        var hasher = ChunkingHasher()
        for (name, size) in [("small.jpg", 1000), ("exact.jpg", 4096), ("empty.jpg", 0), ("large.jpg", 4097)] {
            let bytes = (0 ..< size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let url = try MediaFixtures.write(bytes, named: name, in: directory)
            var lent: [UInt8]?
            let (manifest, _) = try digester.manifest(
                absolutePath: url.path, relativePath: name, buffer: buffer, hasher: &hasher, whole: { lent = [UInt8]($0) })
            #expect(manifest.size == UInt64(size))
            #expect(lent == (size <= 4096 ? bytes : nil), "\(name)")
        }
    }

    @Test("Files: non-media extensions, directories and missing files yield nil")
    func nonMediaFiles() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try MediaFixtures.write(MediaFixtures.heic(identifier: id), named: "notes.txt", in: directory)
        let sidecar = try MediaFixtures.write(MediaFixtures.heic(identifier: id), named: "IMG_0001.AAE", in: directory)
        let folder = directory.appendingPathComponent("folder.heic", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        #expect(Reader.contentIdentifier(ofFileAt: text) == nil)
        #expect(Reader.contentIdentifier(ofFileAt: sidecar) == nil)
        #expect(Reader.contentIdentifier(ofFileAt: folder) == nil)
        #expect(Reader.contentIdentifier(ofFileAt: directory.appendingPathComponent("missing.mov")) == nil)
    }

    @Test("Files: moov after a multi-gigabyte mdat is found by seeking, not reading")
    func hugeSparseMdat() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("long.mov")
        let mdatSize: UInt64 = 5 << 30 // 5 GiB, left as a hole in a sparse file
        let head = MediaFixtures.box("ftyp", MediaFixtures.ascii("qt  ") + MediaFixtures.be32(0) + MediaFixtures.ascii("qt  "))
            + MediaFixtures.be32(1) + MediaFixtures.ascii("mdat") + MediaFixtures.be64(mdatSize)
        let moov = MediaFixtures.box("moov", MediaFixtures.box("meta", MediaFixtures.movMeta(identifier: id)))
        try Data(head).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(head.count - 16) + mdatSize)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(moov))
        try handle.close()
        #expect(Reader.contentIdentifier(ofFileAt: url) == id)
    }
}
