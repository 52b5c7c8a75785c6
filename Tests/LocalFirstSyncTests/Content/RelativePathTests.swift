import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore

/// Paths are byte strings: names that differ only in Unicode normalisation are
/// two files, and ties sort by UTF-8 bytes (PROTOCOL.md).
@Suite struct RelativePathTests {
    /// "café" with a precomposed é (NFC) and with e + combining acute (NFD).
    static let nfc = "caf\u{E9}.txt"
    static let nfd = "cafe\u{301}.txt"

    @Test func normalisationTwinsAreTwoPaths() {
        // The premise: Swift's String calls them equal.
        #expect(Self.nfc == Self.nfd)
        let composed = RelativePath(Self.nfc), decomposed = RelativePath(Self.nfd)
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        var byPath: [RelativePath: Int] = [:]
        byPath[composed] = 1
        byPath[decomposed] = 2
        #expect(byPath[composed] == 1 && byPath[decomposed] == 2)
    }

    /// The scanner's directory test agrees with comparing `directory`, bytes and all.
    @Test func sameDirectoryComparesTheBytesBeforeTheLastSlash() {
        let paths: [RelativePath] = [
            "a.jpg", "b.jpg", "a/x.jpg", "a/y.jpg", "b/x.jpg", "a/b/x.jpg", "ab/x.jpg", "a.b/x.jpg",
            RelativePath(Self.nfc + "/x.jpg"), RelativePath(Self.nfd + "/x.jpg"), RelativePath(Self.nfc + "/y.jpg"),
        ]
        for left in paths {
            for right in paths {
                #expect(left.isInSameDirectory(as: right) == (left.directory == right.directory), "\(left) \(right)")
            }
        }
        #expect(RelativePath("a.jpg").isInSameDirectory(as: "b.jpg"))
        #expect(!RelativePath(Self.nfc + "/x.jpg").isInSameDirectory(as: RelativePath(Self.nfd + "/x.jpg")))
    }

    @Test func sortsByUTF8Bytes() {
        // NFD "cafe\u{301}" has 0x65 where NFC has 0xC3: NFD first, whatever Unicode collation says.
        #expect(RelativePath(Self.nfd) < RelativePath(Self.nfc))
        #expect(!(RelativePath(Self.nfc) < RelativePath(Self.nfd)))
        // A prefix sorts first; "/" (0x2F) sorts before letters and after space and "-".
        let sorted: [RelativePath] = ["b", "a/b", "a b", "a", "a-b", "ab", "Z", "é", "e\u{301}"].sorted()
        #expect(sorted.map(\.string) == ["Z", "a", "a b", "a-b", "a/b", "ab", "b", "e\u{301}", "é"])
        #expect(!(RelativePath("same") < RelativePath("same")))
    }

    @Test func directoryAndName() {
        #expect(RelativePath("a/b/c.jpg").directory == "a/b")
        #expect(RelativePath("a/b/c.jpg").name == "c.jpg")
        #expect(RelativePath("c.jpg").directory == "")
        #expect(RelativePath("c.jpg").name == "c.jpg")
        #expect(RelativePath("").appending("x") == "x")
        #expect(RelativePath("a").appending("x") == "a/x")
    }

    @Test func codableAsPlainString() throws {
        let encoded = try JSONEncoder().encode([RelativePath(Self.nfd)])
        #expect(try JSONDecoder().decode(Array<RelativePath>.self, from: encoded) == [RelativePath(Self.nfd)])
        #expect(try JSONDecoder().decode([String].self, from: encoded).first?.utf8.elementsEqual(Self.nfd.utf8) == true)
    }

    /// Files created with the exact bytes of `name` (Foundation's path handling is not relied on).
    static func createRaw(_ name: String, in directory: URL, contents: String) throws {
        let fd = open(directory.path + "/" + name, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw CocoaError(.fileWriteUnknown) }
    }

    @Test func scannerKeepsBothTwinsInByteOrder() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try Self.createRaw(Self.nfc, in: root, contents: "precomposed")
            try Self.createRaw(Self.nfd, in: root, contents: "decomposed")
            // The same twins as directory names, each holding a file of the same name.
            for directory in ["\u{DC}ber", "U\u{308}ber"] {
                #expect(mkdir(root.path + "/" + directory, 0o755) == 0)
                try Self.createRaw("note.txt", in: root.appendingPathComponent(directory), contents: directory)
            }
            var orders: Set<[String]> = []
            // Through the scan cache as well: the second and later scans take both twins from it.
            let index = try LibraryIndex.inMemory()
            for round in 0..<5 {
                let scan = try await LibraryScanner(root: root, cache: index.scanCache, chunkIndex: index.chunkIndex).scan()
                #expect(scan.statistics.filesHashed + scan.statistics.filesFromCache == 4)
                if round > 0 { #expect(try index.scanCache.loadAll().count == 4) }
                #expect(scan.skipped.isEmpty)
                let paths = scan.assets.flatMap { $0.files.map(\.manifest.path) }
                #expect(paths.count == 4)
                #expect(Set(paths).count == 4)
                #expect(paths == paths.sorted())
                orders.insert(paths.map { $0.string.utf8.map { String($0, radix: 16) }.joined() })
            }
            #expect(orders.count == 1, "the scan order changed between runs")
        }
    }
}
