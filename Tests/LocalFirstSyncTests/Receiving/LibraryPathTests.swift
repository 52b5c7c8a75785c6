import Testing
@testable import LocalFirstSync
@testable import LFSyncContent

@Suite("Receiving: library path validation")
struct LibraryPathTests {
    static let rejected: [(String, ReceivePathError.Reason)] = [
        ("", .empty),
        ("../x", .dotComponent),
        ("..", .dotComponent),
        ("/etc/passwd", .absolute),
        ("a/../../b", .dotComponent),
        ("a/..", .dotComponent),
        ("a//b", .emptyComponent),
        ("a/", .emptyComponent),
        ("a/./b", .dotComponent),
        ("./a", .dotComponent),
        ("x\u{0}y", .controlCharacter),
        ("\u{1b}[31m", .controlCharacter),
        ("a\u{7}b", .controlCharacter),
        ("a\u{7f}b", .controlCharacter),
        ("a\u{85}b", .controlCharacter),
        ("a\u{9f}", .controlCharacter),
        (String(repeating: "a/", count: 2499) + "aa", .tooLong(bytes: 5000)),
        ("Fotos/" + String(repeating: "x", count: 300), .componentTooLong(bytes: 300)),
        (String(repeating: "d/", count: 128) + "f", .tooDeep(components: 129)),
        (".lfsync", .reserved),
        (".lfsync/x", .reserved),
        (".LFSYNC/x", .reserved),
        (".LfSync/staging/abc.partial", .reserved),
        (".lf\u{17F}ync/x", .reserved),
    ]

    @Test(arguments: rejected)
    func rejects(_ path: String, _ reason: ReceivePathError.Reason) {
        #expect(throws: ReceivePathError(reason, path: path)) { try LibraryPath.validate(path) }
    }

    @Test(arguments: [
        "Fotos/Ürlaub 🌊/IMG.HEIC", "IMG_0001.HEIC", ".hidden", "a/.lfsync", ".lfsyncx/y", "..a/b..", "a b/ c /d",
        "日本/写真.jpg", String(repeating: "x", count: 255), String(repeating: "d/", count: 127) + "f",
        // Names real libraries have: a newline, a tab, macOS's `Icon\r`, a backslash (an ordinary byte on Linux).
        "Unsorted/line\nbreak.txt", "tab\there.jpg", "Album/Icon\r", "a\\b", "..\\x",
    ])
    func accepts(_ path: String) throws {
        let validated = try LibraryPath.validate(path)
        #expect(validated.string == path)
        #expect(validated.components == path.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    @Test func splitsIntoComponents() throws {
        let path = try LibraryPath.validate("Fotos/Ürlaub 🌊/IMG.HEIC")
        #expect(path.components == ["Fotos", "Ürlaub 🌊", "IMG.HEIC"])
        #expect(path.name == "IMG.HEIC")
        #expect(Array(path.parentComponents) == ["Fotos", "Ürlaub 🌊"])
    }

    @Test func lengthLimitsAreInBytesNotCharacters() throws {
        // 128 × "é" (2 bytes each) = 256 bytes: one too many for a component.
        let name = String(repeating: "é", count: 128)
        #expect(throws: ReceivePathError(.componentTooLong(bytes: 256), path: name)) { try LibraryPath.validate(name) }
        _ = try LibraryPath.validate(String(repeating: "é", count: 127))
    }

    @Test func differentNormalisationsAreDifferentPaths() throws {
        let composed = try LibraryPath.validate("\u{DC}rlaub.jpg")
        let decomposed = try LibraryPath.validate("U\u{308}rlaub.jpg")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(composed == (try LibraryPath.validate("\u{DC}rlaub.jpg")))
    }

    @Test func errorMessagesShowHostileBytesEscaped() {
        do {
            _ = try LibraryPath.validate("\u{1b}[31mred\u{202E}gpj.exe\\x")
            Issue.record("accepted")
        } catch {
            #expect(error.displayPath == "\\u{1b}[31mred\\u{202e}gpj.exe\\\\x")
            #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x202E })
            #expect(error.description.contains("control character"))
        }
        let long = String(repeating: "a/", count: 3000)
        #expect(ReceivePathError(.tooLong(bytes: 6000), path: long).displayPath.count <= PrintablePath.maxDisplayCharacters + 1)
    }

    /// The byte-level check every received path goes through agrees with the
    /// rule stated on scalars, for every scalar there is.
    @Test func byteCheckMatchesTheScalarRuleForEveryScalar() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "b"
            if LibraryPath.containsForbidden(text.utf8) != LibraryPath.isForbidden(scalar) {
                Issue.record("U+\(String(value, radix: 16)) disagrees")
                return
            }
        }
    }

    @Test func reservedNameIsCaughtInAnyCase() {
        for name in [".lfsync", ".LFSYNC", ".LfSync", ".lf\u{17F}ync", ".LF\u{17F}YNC"] {
            #expect(LibraryPath.isReservedName(name), "\(name)")
        }
        for name in [".lfsyn", ".lfsyncs", "lfsync", ".lfsync2"] {
            #expect(!LibraryPath.isReservedName(name), "\(name)")
        }
    }
}
