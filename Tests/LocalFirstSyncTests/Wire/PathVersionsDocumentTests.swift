import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto

/// PROTOCOL.md's worked cases of "Path versions" are decided by the code exactly as the
/// document says: each line of ```text id=reconciliation-cases is run through
/// `Reconciliation.decide`, so a second implementation can test itself against the same
/// table and cannot be misled by a table that drifted.
@Suite struct PathVersionsDocumentTests {
    /// The document's devices: A = 10, B = 11 (the one deciding), C = 12.
    static let devices: [Character: UInt64] = ["A": 10, "B": 11, "C": 12]

    static func content(_ letter: Substring) -> Hash256 { Blake2b.hash(Array("content \(letter)".utf8)) }

    /// `file:X{A:1,B:2}@100/A`, `deleted{A:2}@200/A`, or `-` (none).
    static func version(_ text: Substring) throws -> PathVersion? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text == "-" { return nil }
        let brace = try #require(text.firstIndex(of: "{")), close = try #require(text.firstIndex(of: "}"))
        let head = text[..<brace]
        let body: PathVersion.Content = head == "deleted" ? .deleted : .file(content(head.dropFirst("file:".count)))
        #expect(head == "deleted" || head.hasPrefix("file:"), "version \(text)")
        let pairs = try text[text.index(after: brace)..<close].split(separator: ",").map { pair -> (device: UInt64, counter: UInt64) in
            let parts = pair.split(separator: ":")
            return (try #require(devices[Character(String(parts[0]))]), try #require(UInt64(parts[1])))
        }
        let tail = text[text.index(after: close)...].dropFirst()  // "100/A"
        let timeAndDevice = tail.split(separator: "/")
        return PathVersion(content: body, vector: VersionVector(pairs), changedAt: try #require(Int64(timeAndDevice[0])),
                           changedBy: try #require(devices[Character(String(timeAndDevice[1]))]))
    }

    static func action(_ text: Substring, ours: PathVersion?, theirs: PathVersion) throws -> Reconciliation.Action {
        let words = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        switch words[0] {
        case "keep": return .keep
        case "adopt": return .adopt(try #require(try version(words[1])))
        case "take": return .take(try #require(try version(words[1])))
        case "delete": return .delete(try #require(try version(words[1])))
        case "retain": return .retain(try #require(try version(words[1])))
        case "conflict":
            let keep = try #require(try version(words[1]))
            let takeTheirs = words[2] == "path:theirs"
            let loser = try #require(takeTheirs ? ours : theirs)
            #expect(words[3] == "copy:\(words[3].dropFirst(5))" && loser.fileHash == content(words[3].dropFirst(5)), "copy of \(text)")
            return .conflict(keep: keep, takeTheirs: takeTheirs, loser: loser)
        default:
            Issue.record("unknown action \(text)")
            return .keep
        }
    }

    @Test func theDocumentedCasesAreDecidedAsDocumented() throws {
        let block = try #require(try ProtocolDocumentTests.examples(kind: "text")["reconciliation-cases"])
        let lines = block.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(lines.count >= 12)
        for line in lines {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false)
            try #require(columns.count == 4, "four columns: \(line)")
            let ours = try Self.version(columns[0])
            let theirs = try #require(try Self.version(columns[1]))
            let deletions = columns[2].trimmingCharacters(in: .whitespaces) == "yes"
            let expected = try Self.action(columns[3], ours: ours, theirs: theirs)
            let decided = Reconciliation.decide(ours: ours, theirs: theirs, deletionsAllowed: deletions, device: Self.devices["B"]!)
            #expect(decided == expected, "\(line)")
        }
    }

    @Test func theConflictNameIsTheLosersFileHash() throws {
        let document = try ProtocolDocumentTests.document()
        let loser = PathVersion(content: .file(Self.content("Y")), vector: VersionVector([(10, 2)]), changedAt: 1, changedBy: 10)
        let name = Reconciliation.conflictPath(of: "2024/IMG_1.xmp", loser: loser)
        #expect(name.string == "2024/IMG_1 (conflict \(Self.content("Y").hex.prefix(8))).xmp")
        #expect(document.contains("`NAME (conflict XXXXXXXX).EXT`"))
    }
}
