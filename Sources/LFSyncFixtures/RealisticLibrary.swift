#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import LFSyncSystem
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// A seeded photo library shaped like one that grew over ten years, for
/// end-to-end tests and benchmarks that must meet what users really have:
/// event folders of iPhone shots with Live Photo partners and edit sidecars,
/// camera RAW+JPEG pairs, copies strewn into `Exports` and `Backup`, junk and
/// empty files, a hard link, and the names that break naive code (NFC/NFD and
/// case twins, control characters, non-Latin scripts, a 255-byte name, a
/// chain of 40 folders).
///
/// Paths are compared and remembered only as bytes: Swift's `String`
/// equality is canonical equivalence, so an NFC and an NFD twin compare equal
/// and one would vanish from a String-keyed set. A `String` passed to a
/// system call hands over its stored UTF-8 unchanged, so files are created
/// with `openat(2)` on exactly the bytes listed in the summary, something
/// FileManager and URL do not promise.
public enum RealisticLibrary {
    public struct Options: Sendable {
        /// About how many regular files to write; exact from a few hundred up,
        /// a little more below that, because every special case is always written.
        public var fileCount: Int
        public var seed: UInt64
        /// The largest photo or video. A file is never smaller than its media
        /// container plus 16 seeded bytes, which keeps every media file unique.
        public var maxFileBytes: Int

        public init(fileCount: Int = 5_000, seed: UInt64 = 2026, maxFileBytes: Int = 48_000) {
            self.fileCount = fileCount
            self.seed = seed
            self.maxFileBytes = maxFileBytes
        }
    }

    public struct Summary: Sendable {
        /// Regular files written; the hard link counts as its own path.
        public var files = 0
        public var bytes: UInt64 = 0
        /// Relative paths in the order written, each holding exactly the bytes of its name on disk.
        public var paths: [String] = []
        /// Paths whose bytes equal an earlier path's: copies, the hard link,
        /// repeated sidecars and every empty file after the first.
        public var duplicatePaths = 0
        public var emptyFiles = 0
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The file system folds names that differ only in normalisation or
        /// case (macOS, ext4 casefold), so the library is not what it claims.
        case namesFolded(directory: String, missing: [String])
        /// A generator bug: a second write to a path would make the summary lie.
        case pathWrittenTwice(String)

        public var description: String {
            switch self {
            case let .namesFolded(directory, missing):
                "the file system merged names in \(directory): \(missing.map { $0.debugDescription }.joined(separator: ", ")) missing"
            case let .pathWrittenTwice(path):
                "realistic library wrote \(path.debugDescription) twice"
            }
        }
    }

    /// Writes the library into `root` (created if needed). A rerun with the
    /// same options rewrites the same tree in place; other files are left alone.
    @discardableResult
    public static func write(at root: URL, options: Options = Options()) throws -> Summary {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let writer = try LibraryWriter(root: root.path, options: options)
        try writer.writeLibrary()
        return writer.summary
    }
}

/// How a file's bytes relate to earlier files, which decides whether it counts as a duplicate.
private enum Origin {
    /// Carries its own seeded bytes, so it equals no other file.
    case seeded
    /// Regenerated from an earlier file's recipe: equal to it.
    case copy
    /// Fixed or generated text that may repeat (sidecar presets, empty files): looked up.
    case literal
}

/// A seeded file's recipe: enough to write its bytes again for a copy
/// without keeping them in memory.
private struct Media {
    enum Kind { case heic, jpeg, mov, nef, pdf, dsStore, thumbsDB }
    var kind: Kind
    var identifier: String?
    var size: Int
    var seed: UInt64
}

/// A still photo waiting for its copies to be written after all the originals.
private struct PendingCopy {
    var path: String
    var stem: String
    var ext: String
    var media: Media
    var time: timespec
}

/// One press of the shutter: the files it leaves behind in a folder.
private struct Shot {
    enum Sidecar { case none, presetAAE, uniqueAAE, presetXMP, uniqueXMP }
    var camera = false          // DSC_ names; RAW+JPEG when `raw`
    var raw = false
    var heic = false            // otherwise JPEG
    var live = false
    var identifier = false
    var sidecar = Sidecar.none
    var copied = false

    var fileCount: Int {
        1 + (raw ? 1 : 0) + (live ? 1 : 0) + (sidecar == .none ? 0 : 1) + (copied ? 1 : 0)
    }

    /// Every special case once, first, so that even a 200-file library has them all.
    static let opening: [Shot] = [
        Shot(heic: true, live: true, identifier: true, sidecar: .presetAAE, copied: true),
        Shot(live: true, identifier: true, copied: true),
        Shot(camera: true, raw: true, sidecar: .presetXMP, copied: true),
        Shot(camera: true, raw: true, sidecar: .presetXMP),
        Shot(heic: true, sidecar: .presetAAE),
        Shot(heic: true, live: true, sidecar: .uniqueAAE),
        Shot(camera: true, raw: true, sidecar: .uniqueXMP),
        Shot(),
    ]
}

/// Owns the open root and everything reused across files: the content
/// buffer, the directories already made, the paths already written.
private final class LibraryWriter {
    static let firstSecond = 1_420_070_400          // 2015-01-01 UTC
    static let endSecond = 1_735_689_600            // 2025-01-01 UTC
    static let eventNames = [
        "Holiday", "Christmas at Oma's", "Summer in Tuscany", "Wedding of Anna & Tom", "Birthday Party",
        "Beach Day", "Hiking the Alps", "Zoo", "Garden", "School Play", "Road Trip", "New Year's Eve",
        "Easter", "Ski Trip", "Concert", "First Day of School", "Moving House", "Paris Weekend",
        "Camping", "BBQ at the Lake", "Graduation", "Halloween", "Snow!", "Kids",
    ]
    static let presetXMP = Array("""
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="5" xmp:Label="Red"/>
         </rdf:RDF>
        </x:xmpmeta>

        """.utf8)
    /// A little-endian TIFF header, as a Nikon NEF starts.
    static let nefHeader: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]

    let rootFD: Int32
    let options: RealisticLibrary.Options
    var random: SplitMix64
    var summary = RealisticLibrary.Summary()

    let sizeBands: Int
    let heicTemplate = MediaFixtures.liveStillHEIC(identifier: nil)
    let jpegTemplate = MediaFixtures.liveStillJPEG(identifier: nil)
    let movTemplate = MediaFixtures.liveVideoMOV(identifier: nil)
    let presetAAE: [UInt8]
    let zeros: [UInt8]
    var buffer: [UInt8] = []
    var times = [timespec(), timespec()]

    var madeDirectories: Set<[UInt8]> = []
    var directoryTimes: [(path: String, time: timespec)] = []
    var lastDirectory: [UInt8] = []
    var writtenPaths: Set<[UInt8]> = []
    var literalContents: Set<[UInt8]> = []

    var eventFolders: [String] = []
    var eventKeys: Set<[UInt8]> = []
    var imageNumber = 1
    var cameraNumber = 100
    var dcimNumber = 100
    var pendingCopies: [PendingCopy] = []
    var linkTarget: (path: String, name: String, size: Int)?

    init(root: String, options: RealisticLibrary.Options) throws {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: root, errno: errno) }
        rootFD = fd
        var options = options
        options.fileCount = max(options.fileCount, 0)
        options.maxFileBytes = max(options.maxFileBytes, 1)
        self.options = options
        random = SplitMix64(seed: options.seed)
        var bands = 0
        while bands < 40, min(1_024, options.maxFileBytes) << (bands + 1) < options.maxFileBytes { bands += 1 }
        sizeBands = bands + 1
        zeros = [UInt8](repeating: 0, count: max(options.maxFileBytes, 16))
        var preset = SplitMix64(seed: options.seed ^ 0xAAE)
        presetAAE = Self.aae(preset.bytes(96))
    }

    deinit { close(rootFD) }

    func writeLibrary() throws {
        let target = options.fileCount
        let empties = max(4, target / 1_000)
        let junk = max(2, target / 2_500)
        try writeOddNames()
        try writeDeepChain()
        try writeDocuments(count: max(3, target * 3 / 100))
        try writePhotos(budget: target - (empties + 2 * junk + 1))
        try writeCopies()
        try writeHardLink()
        try spread(".DS_Store", count: junk) { seeded(.dsStore, size: 6_148 + below(8_192)) }
        try spread("Thumbs.db", count: junk) { seeded(.thumbsDB, size: 9_216 + below(16_384)) }
        try writeEmptyFiles(count: empties)
        try verifyDistinct(in: "Unsorted", ["caf\u{E9}.txt", "cafe\u{301}.txt", "\u{DC}", "U\u{308}", "IMG_1.JPG", "img_1.jpg"])
        try stampDirectories()
    }

    // MARK: - The library's parts

    /// Names that differ only in bytes a careless comparison ignores, and
    /// names that travel badly through shells, terminals and databases.
    func writeOddNames() throws {
        let folder = "Unsorted"
        try put("\(folder)/caf\u{E9}.txt", text("NFC: one precomposed \u{E9}\n"), .literal, at: anyTime())
        try put("\(folder)/cafe\u{301}.txt", text("NFD: e and a combining acute, a different file\n"), .literal, at: anyTime())
        for twin in ["\u{DC}", "U\u{308}"] {
            try put("\(folder)/\(twin)/Foto.jpg", seeded(.jpeg), .seeded, at: anyTime())
        }
        try put("\(folder)/line\nbreak.txt", text("a newline inside a file name\n"), .literal, at: anyTime())
        try put("\(folder)/tab\there.txt", text("a tab inside a file name\n"), .literal, at: anyTime())
        for name in ["日本語の写真.jpg", "Φωτογραφία από την Κρήτη.jpg", "صورة العائلة.jpg", "Фото с дачи.jpg",
                     "Sunset 📷🌅.jpg", "Holiday photo (edited) final.jpg", "IMG_1.JPG", "img_1.jpg", Self.longName()] {
            try put("\(folder)/\(name)", seeded(.jpeg), .seeded, at: anyTime())
        }
    }

    /// Exactly 255 bytes, the ext4 limit for one name, in fewer characters:
    /// multi-byte letters catch code that counts characters instead of bytes.
    static func longName() -> String {
        var stem = "Panorama vom Großglockner über Österreich"
        while stem.utf8.count + " Übersicht".utf8.count + 4 <= 255 { stem += " Übersicht" }
        stem += String(repeating: "-", count: 255 - 4 - stem.utf8.count)
        return stem + ".jpg"
    }

    /// Forty nested folders, as an old disk image unpacked over the years leaves them.
    func writeDeepChain() throws {
        let levels = (1...38).map { "Nested \(Self.padded($0, 2))" }
        let path = (["Archive", "Old Laptop"] + levels + ["IMG_0001.JPG"]).joined(separator: "/")
        try put(path, seeded(.jpeg), .seeded, at: anyTime())
    }

    func writeDocuments(count: Int) throws {
        for index in 0..<count {
            let time = anyTime()
            let date = Self.civil(time.tv_sec)
            switch index % 4 {
            case 0:
                try put("Documents/Notes/Note \(index).txt", text(sentence(words: 8 + below(40)) + "\n"), .literal, at: time)
            case 1:
                try put("Documents/Scans/\(date.year)/Scan \(Self.padded(index, 5)).pdf", seeded(.pdf), .seeded, at: time)
            case 2:
                try put("Documents/Taxes/\(date.year)/receipt-\(Self.padded(index, 5)).pdf",
                        seeded(.pdf, size: 1_024 + below(8_192)), .seeded, at: time)
            default:
                let lines = (0..<(2 + below(6))).map { _ in "- " + sentence(words: 2 + below(5)) + "\n" }
                try put("Documents/Recipes/Recipe \(index).txt", text("Recipe \(index)\n" + lines.joined()), .literal, at: time)
            }
        }
    }

    /// Shots into event folders until `budget` files (copies included) are
    /// planned; a shot that would overshoot shrinks to a single still.
    func writePhotos(budget: Int) throws {
        var folder = ""
        var shotsLeft = 0
        var clock = 0
        for index in 0... {
            var shot: Shot
            if index < Shot.opening.count {
                shot = Shot.opening[index]
            } else {
                let room = budget - summary.files - pendingCopies.count
                guard room > 0 else { return }
                shot = randomShot()
                if shot.fileCount > room { shot = Shot(heic: shot.heic) }
            }
            if shotsLeft == 0 { (folder, shotsLeft, clock) = newEvent(budget: budget) }
            shotsLeft -= 1
            clock += 3 + below(600)
            try writeShot(shot, in: folder, at: clock)
        }
    }

    func randomShot() -> Shot {
        var shot = Shot()
        let kind = below(100)
        if kind < 12 {
            shot.camera = true
            shot.raw = below(10) < 7
            if shot.raw, below(10) < 4 { shot.sidecar = below(2) == 0 ? .presetXMP : .uniqueXMP }
        } else {
            shot.live = kind < 50
            shot.heic = kind < 47 || (kind >= 50 && kind < 75)
            shot.identifier = shot.live && below(40) == 0
            let edit = below(100)
            shot.sidecar = edit < 33 ? .presetAAE : edit < 36 ? .uniqueAAE : .none
        }
        shot.copied = below(100) < 3
        return shot
    }

    /// A folder of 2–5 levels named the ways people and importers name them.
    /// The first five events are small and take one shape each, so every
    /// shape appears in a small library.
    func newEvent(budget: Int) -> (folder: String, shots: Int, start: Int) {
        let index = eventFolders.count
        let start = Self.eventStart(progress: summary.files, of: budget) + below(20 * 86_400)
        let date = Self.civil(start)
        let month = "\(date.year)-\(Self.padded(date.month, 2))"
        let name = Self.eventNames[below(Self.eventNames.count)]
        var folder: String
        switch index < 5 ? index : below(5) {
        case 0: folder = "Photos/\(date.year)/\(month) \(name)"
        case 1: folder = "Photos/\(date.year)/\(name)"
        case 2: folder = "Photos/\(date.year)/\(month) \(name)/" + ["Day 1", "Day 2", "Phone", "Camera", "Selects"][below(5)]
        case 3: folder = "Photos/\(date.year)/\(month) \(name)/Edited/" + ["Best of", "For Print", "Instagram"][below(3)]
        default:
            if below(2) == 0 {
                folder = "DCIM/\(dcimNumber)APPLE"
                dcimNumber += 1
            } else {
                folder = "Imports/\(month)-\(Self.padded(date.day, 2))"
            }
        }
        var suffix = 2
        let base = folder
        while !eventKeys.insert(Array(folder.utf8)).inserted {
            folder = "\(base) (\(suffix))"
            suffix += 1
        }
        eventFolders.append(folder)
        return (folder, index < 5 ? 4 + below(4) : 10 + below(90), start)
    }

    func writeShot(_ shot: Shot, in folder: String, at second: Int) throws {
        let stem = shot.camera ? "DSC_\(Self.padded(cameraNumber, 4))" : "IMG_\(Self.padded(imageNumber, 4))"
        if shot.camera { cameraNumber = cameraNumber % 9_999 + 1 } else { imageNumber = imageNumber % 9_999 + 1 }
        let base = "\(folder)/\(stem)"
        let identifier = shot.identifier ? uuid() : nil
        if shot.raw {
            try put(base + ".NEF", seeded(.nef, size: max(mediaSize(), mediaSize())), .seeded, at: stamp(second))
        }
        let ext = shot.heic ? "HEIC" : "JPG"
        let still = Media(kind: shot.heic ? .heic : .jpeg, identifier: identifier, size: mediaSize(), seed: random.next())
        let stillTime = stamp(second)
        try put("\(base).\(ext)", render(still), .seeded, at: stillTime)
        if linkTarget == nil { linkTarget = ("\(base).\(ext)", "\(stem).\(ext)", buffer.count) }  // buffer: the still
        if shot.live {
            let video = Media(kind: .mov, identifier: identifier, size: max(mediaSize(), mediaSize()), seed: random.next())
            try put(base + ".MOV", render(video), .seeded, at: stamp(second))
        }
        let edited = stamp(second + 3_600 + below(90 * 86_400))
        switch shot.sidecar {
        case .none: break
        case .presetAAE: try put(base + ".AAE", presetAAE, .literal, at: edited)
        case .uniqueAAE: try put(base + ".AAE", Self.aae(random.bytes(64 + below(160))), .literal, at: edited)
        case .presetXMP: try put(base + ".xmp", Self.presetXMP, .literal, at: edited)
        case .uniqueXMP: try put(base + ".NEF.xmp", uniqueXMP(), .literal, at: edited)
        }
        if shot.copied {
            pendingCopies.append(PendingCopy(path: "\(base).\(ext)", stem: stem, ext: ext, media: still, time: stillTime))
        }
    }

    /// Byte-identical copies, in turn: the same name in `Exports`, a
    /// Finder-style renamed copy there, and the original path under `Backup`
    /// with its time kept, as `cp -p` or rsync leaves it.
    func writeCopies() throws {
        for (index, copy) in pendingCopies.enumerated() {
            let bytes = render(copy.media)
            let exported = stamp(copy.time.tv_sec + 86_400 * (1 + below(400)))
            switch index % 3 {
            case 0: try put(freePath("Exports", copy.stem, copy.ext), bytes, .copy, at: exported)
            case 1: try put(freePath("Exports", copy.stem + " copy", copy.ext), bytes, .copy, at: exported)
            default: try put("Backup/" + copy.path, bytes, .copy, at: copy.time)
            }
        }
    }

    /// A second name for the first photo, as some import tools and backup
    /// schemes leave it: two paths, one inode.
    func writeHardLink() throws {
        guard let target = linkTarget else { return }
        let path = "Favourites/\(target.name)"
        guard writtenPaths.insert(Array(path.utf8)).inserted else { throw RealisticLibrary.Failure.pathWrittenTwice(path) }
        try makeParent(of: path, at: anyTime())
        guard unlinkat(rootFD, path, 0) == 0 || errno == ENOENT else { throw SystemError("unlink", path: path, errno: errno) }
        guard linkat(rootFD, target.path, rootFD, path, 0) == 0 else { throw SystemError("link", path: path, errno: errno) }
        record(path, size: target.size, duplicate: true)
    }

    func writeEmptyFiles(count: Int) throws {
        try put("DCIM/.nomedia", [], .literal, at: anyTime())
        try put("Documents/todo.txt", [], .literal, at: anyTime())
        try put("Unsorted/untitled.txt", [], .literal, at: anyTime())
        try spread(".nomedia", count: (count - 2) / 2) { [] }
        try spread("notes.txt", count: (count - 3) / 2) { [] }
    }

    /// Writes `name` into `count` different event folders, spaced through the
    /// library, then into any folder still free of it.
    func spread(_ name: String, count: Int, _ content: () -> [UInt8]) throws {
        var written = 0
        let folders = eventFolders + ["Photos", "Exports", "Documents"]
        let spacing = max(folders.count / max(count, 1), 1)
        for index in Array(stride(from: 0, to: folders.count, by: spacing)) + Array(folders.indices) where written < count {
            let path = "\(folders[index])/\(name)"
            guard !writtenPaths.contains(Array(path.utf8)) else { continue }
            let bytes = content()
            try put(path, bytes, bytes.isEmpty ? .literal : .seeded, at: anyTime())
            written += 1
        }
    }

    // MARK: - Contents

    /// Fills the shared buffer with `media`'s bytes: its real container, then
    /// seeded padding (in a `free` box where the format has boxes, which
    /// readers skip; after the end marker elsewhere).
    func render(_ media: Media) -> [UInt8] {
        buffer.removeAll(keepingCapacity: true)
        let boxed = media.kind == .heic || media.kind == .mov
        switch media.kind {
        case .heic: buffer += media.identifier.map { MediaFixtures.liveStillHEIC(identifier: $0) } ?? heicTemplate
        case .jpeg: buffer += media.identifier.map { MediaFixtures.liveStillJPEG(identifier: $0) } ?? jpegTemplate
        case .mov: buffer += media.identifier.map { MediaFixtures.liveVideoMOV(identifier: $0) } ?? movTemplate
        case .nef: buffer += Self.nefHeader
        case .pdf: buffer += Array("%PDF-1.7\n".utf8)
        case .dsStore: buffer += [0, 0, 0, 1] + Array("Bud1".utf8)
        case .thumbsDB: buffer += [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]  // OLE compound file
        }
        let trailer = media.kind == .pdf ? Array("\n%%EOF\n".utf8) : []
        let padding = max(media.size - buffer.count - trailer.count - (boxed ? 8 : 0), 16)
        if boxed {
            let size = UInt32(clamping: padding + 8)
            buffer += [UInt8(size >> 24), UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 8),
                       UInt8(truncatingIfNeeded: size)] + Array("free".utf8)
        }
        let start = buffer.count
        buffer += zeros.prefix(padding)
        buffer.withUnsafeMutableBytes { Self.fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...]), seed: media.seed) }
        buffer += trailer
        return buffer
    }

    /// The bytes `SplitMix64.fill` gives, stored a word at a time: its
    /// byte-at-a-time loop was a third of the run time in the debug builds
    /// tests use.
    static func fill(_ out: UnsafeMutableRawBufferPointer, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let words = out.count / 8
        for word in 0..<words {
            out.storeBytes(of: generator.next().littleEndian, toByteOffset: word * 8, as: UInt64.self)
        }
        generator.fill(UnsafeMutableRawBufferPointer(rebasing: out[(words * 8)...]))
    }

    /// A fresh seeded file of `kind`.
    func seeded(_ kind: Media.Kind, size: Int? = nil) -> [UInt8] {
        render(Media(kind: kind, size: size ?? mediaSize(), seed: random.next()))
    }

    /// Sizes spread evenly over doublings from 1 KB to `maxFileBytes` (1–2 KB
    /// as likely as 24–48 KB), as thumbnails, screenshots and photos mix in a
    /// real library; integer arithmetic keeps it the same on every machine.
    func mediaSize() -> Int {
        let low = min(1_024, options.maxFileBytes)
        let band = below(sizeBands)
        let from = low << band
        return from + below(max(min(from * 2, options.maxFileBytes) - from, 1))
    }

    func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    func sentence(words: Int) -> String {
        let vocabulary = ["flour", "milk", "butter", "call", "garage", "invoice", "school", "trip", "photos",
                          "backup", "the", "and", "before", "after", "Monday", "sugar", "eggs", "NAS", "print", "frame"]
        return (0..<words).map { _ in vocabulary[below(vocabulary.count)] }.joined(separator: " ")
    }

    /// An edit sidecar as Photos writes it: the adjustment is opaque base64.
    static func aae(_ adjustment: [UInt8]) -> [UInt8] {
        Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>adjustmentBaseVersion</key>
            \t<integer>0</integer>
            \t<key>adjustmentData</key>
            \t<data>
            \t\(base64(adjustment))
            \t</data>
            \t<key>adjustmentEditorBundleID</key>
            \t<string>com.apple.mobileslideshow</string>
            \t<key>adjustmentFormatIdentifier</key>
            \t<string>com.apple.photo</string>
            \t<key>adjustmentFormatVersion</key>
            \t<string>1.5</string>
            </dict>
            </plist>

            """.utf8)
    }

    func uniqueXMP() -> [UInt8] {
        Array("""
            <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="darktable">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
                xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/" xmp:Rating="\(below(6))"
                xmpMM:DocumentID="xmp.did:\(uuid())"/>
             </rdf:RDF>
            </x:xmpmeta>

            """.utf8)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let chunk = bytes[start..<min(start + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
            for index in 0..<4 {
                out.append(index <= chunk.count ? alphabet[Int(value >> (18 - 6 * index) & 63)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Randomness, names and dates

    func below(_ bound: Int) -> Int { Int(random.next() % UInt64(max(bound, 1))) }

    /// Formatted like SampleLibrary's identifiers, so both libraries read alike.
    func uuid() -> String {
        let a = random.next(), b = random.next()
        return [Self.hex(a >> 32, 8), Self.hex(a >> 16 & 0xFFFF, 4), Self.hex(a & 0xFFFF, 4),
                Self.hex(b >> 48, 4), Self.hex(b & 0xFFFF_FFFF_FFFF, 12)].joined(separator: "-")
    }

    static func hex(_ value: UInt64, _ digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(digits - text.count, 0)) + text
    }

    static func padded(_ value: Int, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(digits - text.count, 0)) + text
    }

    /// The first free `directory/stem.ext`, then `stem (2).ext` and so on, as
    /// Finder and export dialogs name a second file of the same name.
    func freePath(_ directory: String, _ stem: String, _ ext: String) -> String {
        var path = "\(directory)/\(stem).\(ext)"
        var number = 2
        while writtenPaths.contains(Array(path.utf8)) {
            path = "\(directory)/\(stem) (\(number)).\(ext)"
            number += 1
        }
        return path
    }

    /// Events move forward through 2015–2024 as the library fills, whatever its size.
    static func eventStart(progress: Int, of total: Int) -> Int {
        let span = endSecond - firstSecond - 30 * 86_400
        return firstSecond + Int(Int64(span) * Int64(min(progress, max(total, 1))) / Int64(max(total, 1)))
    }

    func anyTime() -> timespec { stamp(Self.firstSecond + below(Self.endSecond - Self.firstSecond)) }

    /// Year, month and day in UTC by Howard Hinnant's days-to-civil algorithm:
    /// integers only, so folder names never depend on the time zone or calendar.
    static func civil(_ second: Int) -> (year: Int, month: Int, day: Int) {
        let z = second / 86_400 + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A past time with seeded nanoseconds, so files rarely share a time
    /// exactly; clamped into 2015–2024.
    func stamp(_ second: Int) -> timespec {
        timespec(tv_sec: min(max(second, Self.firstSecond), Self.endSecond - 1), tv_nsec: below(1_000_000_000))
    }

    // MARK: - System calls

    func put(_ path: String, _ content: [UInt8], _ origin: Origin, at time: timespec) throws {
        guard writtenPaths.insert(Array(path.utf8)).inserted else { throw RealisticLibrary.Failure.pathWrittenTwice(path) }
        try makeParent(of: path, at: time)
        let fd = openat(rootFD, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        defer { close(fd) }
        try content.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = write(fd, raw.baseAddress?.advanced(by: offset), raw.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw SystemError("write", path: path, errno: count < 0 ? errno : EIO) }
                offset += count
            }
        }
        times[0] = time
        times[1] = time
        guard futimens(fd, times) == 0 else { throw SystemError("futimens", path: path, errno: errno) }
        let duplicate = switch origin {
        case .seeded: false
        case .copy: true
        case .literal: !literalContents.insert(content).inserted
        }
        record(path, size: content.count, duplicate: duplicate)
    }

    func record(_ path: String, size: Int, duplicate: Bool) {
        summary.files += 1
        summary.bytes += UInt64(size)
        summary.paths.append(path)
        if duplicate { summary.duplicatePaths += 1 }
        if size == 0 { summary.emptyFiles += 1 }
    }

    /// Makes each missing ancestor once; consecutive files mostly share a
    /// folder, so the common case is one comparison.
    func makeParent(of path: String, at time: timespec) throws {
        let bytes = Array(path.utf8)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return }
        let parent = Array(bytes[..<slash])
        guard parent != lastDirectory else { return }
        try makeDirectory(parent, at: time)
        lastDirectory = parent
    }

    func makeDirectory(_ key: [UInt8], at time: timespec) throws {
        guard !madeDirectories.contains(key) else { return }
        if let slash = key.lastIndex(of: UInt8(ascii: "/")) { try makeDirectory(Array(key[..<slash]), at: time) }
        let path = String(decoding: key, as: UTF8.self)
        guard mkdirat(rootFD, path, 0o755) == 0 || errno == EEXIST else { throw SystemError("mkdir", path: path, errno: errno) }
        madeDirectories.insert(key)
        directoryTimes.append((path, time))
    }

    /// Reads the names back: a file system that folds normalisation or case
    /// would have silently merged twins, and the summary would then lie.
    func verifyDistinct(in directory: String, _ names: [String]) throws {
        let fd = openat(rootFD, directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let stream = fdopendir(fd) else {
            let error = SystemError("opendir", path: directory, errno: errno)
            if fd >= 0 { close(fd) }
            throw error
        }
        defer { closedir(stream) }
        var present: Set<[UInt8]> = []
        while let entry = readdir(stream) {
            present.insert(DirectoryEntryName.bytes(of: entry))
        }
        let missing = names.filter { !present.contains(Array($0.utf8)) }
        guard missing.isEmpty else { throw RealisticLibrary.Failure.namesFolded(directory: directory, missing: missing) }
    }

    /// Last, because every entry made inside a folder moves its time to now.
    func stampDirectories() throws {
        for (path, time) in directoryTimes {
            times[0] = time
            times[1] = time
            guard utimensat(rootFD, path, times, 0) == 0 else { throw SystemError("utimensat", path: path, errno: errno) }
        }
    }
}
