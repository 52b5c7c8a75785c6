#if canImport(Glibc)
import Glibc
#endif

/// A library-relative, `/`-separated path, compared, hashed and sorted by its
/// UTF-8 bytes.
///
/// Linux names are byte strings: `café.txt` spelled with a precomposed `é`
/// (NFC) and with `e` + a combining accent (NFD) are two files. Swift's
/// `String` equality is canonical equivalence and would merge them — in a
/// dictionary keyed by path, one of the two would silently vanish, and a
/// sort would order them however the hash table happened to. Every path the
/// scanner, the caches, the wire and the receiver handle is this type, so no
/// such comparison can slip in. Ties between paths sort by bytes, as
/// PROTOCOL.md requires of every implementation.
///
/// The text is valid UTF-8 by construction (the scanner lists names that are
/// not as skipped); it is not otherwise checked here — a path from the wire
/// passes `LibraryPath.validate` before it reaches the file system.
public struct RelativePath: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path exactly as its bytes are: never normalised.
    public let string: String

    public init(_ string: String) {
        self.string = string
    }

    public init(stringLiteral value: String) {
        string = value
    }

    public init(from decoder: any Decoder) throws {
        string = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }

    public var description: String { string }

    public var utf8Count: Int { string.utf8.count }

    /// Runs `body` over the path's bytes without copying them (native strings
    /// are contiguous; anything else is copied once).
    public func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        var copy = string
        return try copy.withUTF8(body)
    }

    public static func == (lhs: RelativePath, rhs: RelativePath) -> Bool {
        lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Lexicographic by UTF-8 bytes (which is also code point order).
    public static func < (lhs: RelativePath, rhs: RelativePath) -> Bool {
        lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0 {
                    let order = memcmp(left.baseAddress!, right.baseAddress!, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    /// The path with `component` appended (`""` is the library root).
    public func appending(_ component: String) -> RelativePath {
        string.isEmpty ? RelativePath(component) : RelativePath(string + "/" + component)
    }

    /// Everything before the last `/` (`""` for a file at the library root).
    public var directory: RelativePath {
        guard let slash = string.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return RelativePath(String(string[..<slash]))
    }

    /// Whether both stand in the same directory (the same bytes before the last
    /// `/`), without building either directory: the scanner asks this of every
    /// file it groups, and a directory path longer than 15 bytes is an allocation.
    public func isInSameDirectory(as other: RelativePath) -> Bool {
        withUTF8 { left in
            other.withUTF8 { right in
                let leftEnd = left.lastIndex(of: UInt8(ascii: "/")) ?? 0
                let rightEnd = right.lastIndex(of: UInt8(ascii: "/")) ?? 0
                return leftEnd == rightEnd && (leftEnd == 0 || memcmp(left.baseAddress!, right.baseAddress!, leftEnd) == 0)
            }
        }
    }

    /// The last component.
    public var name: String {
        guard let slash = string.utf8.lastIndex(of: UInt8(ascii: "/")) else { return string }
        return String(string[string.utf8.index(after: slash)...])
    }
}

extension RelativePath {
    /// The path with control characters and bidi overrides escaped, safe to
    /// show on a terminal or in a log (a name may contain a newline or ESC).
    public var printable: String { PrintablePath.escape(string) }
}
