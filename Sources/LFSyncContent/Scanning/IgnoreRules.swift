/// Which paths of a library are never synced, written in gitignore syntax.
///
/// gitignore is the syntax people already know and can test: for every
/// pattern this type accepts, `git check-ignore --no-index` gives the same
/// answer (see `IgnorePattern` for how closely git is followed, including its
/// quirks). Paths are matched as bytes, UTF-8, `/`-separated, relative to the
/// library root with no leading or trailing slash, and case-sensitively,
/// because Linux names are byte strings (see `RelativePath`).
///
/// All rules are relative to the library root: a `.lfsyncignore` is read from
/// the root only, unlike `.gitignore` files, which also apply per directory.
///
/// The one deliberate difference in meaning from git: a pattern git accepts but
/// can never match (a lone trailing backslash, an unterminated `[`, an unknown
/// `[:class:]`, a NUL byte) is refused with `Failure.invalidPattern`, so a
/// typo is reported instead of letting the file sync unnoticed.
///
/// The work is bounded, because rules can come from a peer (a pull's
/// excludes): a line is at most 4096 bytes, `add` refuses a rule beyond the
/// 10,000th, and matching one rule costs at most O(pattern × path) steps,
/// however its stars are arranged.
public struct IgnoreRules: Sendable {
    /// What no photo library wants, in gitignore syntax, lowest precedence
    /// (later rules can re-include with `!`): Finder's `.DS_Store` and the
    /// `._` AppleDouble files macOS writes on non-Apple volumes, Windows'
    /// thumbnail cache and folder settings, Synology's `@eaDir` thumbnail
    /// folders, freedesktop thumbnail caches, the per-user trash that desktops
    /// make on removable drives (`.Trash-1000`), and lfsync's own state.
    public static let defaultPatterns: [String] = [
        ".DS_Store", "._*", "Thumbs.db", "desktop.ini", "@eaDir/", ".thumbnails/", ".Trash-*/", ".lfsync/",
    ]
    /// The ignore file read from a library's root.
    public static let fileName = ".lfsyncignore"
    /// A longer line is refused: it bounds the cost of one rule per path.
    public static let maximumLineLength = IgnorePattern.maximumLineLength
    /// `add` refuses more rules than this: every path is matched against all of them.
    public static let maximumPatternCount = 10_000

    /// One compiled line and where it came from.
    private struct Rule: Sendable {
        let pattern: IgnorePattern
        let source: String
        let line: Int
    }

    /// In the order added; the last matching rule decides.
    private var rules: [Rule] = []

    /// No rules: nothing is excluded.
    public init() {}

    /// The `defaultPatterns`, with source "built-in".
    public static func defaults() -> IgnoreRules { builtIn }

    private static let builtIn: IgnoreRules = {
        var rules = IgnoreRules()
        for (index, pattern) in defaultPatterns.enumerated() {
            do {
                try rules.add(Array(pattern.utf8)[...], source: "built-in", line: index + 1)
            } catch {
                assertionFailure("built-in ignore pattern refused: \(error)")
            }
        }
        return rules
    }()

    /// Adds one line, treated exactly as a line of an ignore file (comments and
    /// blank lines add nothing); for `--exclude` and the like, where `source`
    /// names the option in messages.
    public mutating func add(line: String, source: String) throws(IgnoreRules.Failure) {
        let bytes = Array(line.utf8)
        if bytes.contains(IgnorePattern.ASCII.lineFeed) {
            throw .invalidPattern(source: source, line: 1, pattern: line, reason: "contains a line break")
        }
        try add(bytes[...], source: source, line: 1)
    }

    /// Adds every line of an ignore file's bytes, numbering lines from 1 for
    /// messages; `source` is the file's path. As git does, a UTF-8 byte order
    /// mark at the start is skipped, and a line may end in LF or CRLF (one
    /// carriage return before the line feed is dropped), so a file saved by a
    /// Windows editor means what it says. Nothing is added if any line fails.
    public mutating func add(fileContents: [UInt8], source: String) throws(IgnoreRules.Failure) {
        var updated = self
        var start = fileContents.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var lineNumber = 1
        while start < fileContents.count {
            let end = fileContents[start...].firstIndex(of: IgnorePattern.ASCII.lineFeed) ?? fileContents.count
            try updated.add(fileContents[start..<end], source: source, line: lineNumber)
            start = end + 1
            lineNumber += 1
        }
        self = updated
    }

    /// Appends `other`'s rules after these, so they take precedence: built-in
    /// defaults, then the library's file, then the command line. It does not
    /// throw: each part was already held to `maximumPatternCount` as its lines
    /// were added, so a combination of a few parts stays bounded; a line added
    /// to the result afterwards is refused once it holds the maximum.
    public mutating func append(_ other: IgnoreRules) {
        rules += other.rules
    }

    /// No rule at all (blank lines and comments are not rules).
    public var isEmpty: Bool { rules.isEmpty }

    /// How many rules there are, `!` rules included.
    public var patternCount: Int { rules.count }

    /// Whether `path` is excluded by the rules themselves: the last matching
    /// rule decides, and a `!` rule re-includes. It does not look at ancestors,
    /// because the walker never descends into an excluded directory; for a
    /// path met any other way, use `isExcludedWithAncestors`.
    public func isExcluded(_ path: [UInt8], isDirectory: Bool) -> Bool {
        path.withUnsafeBufferPointer { decide($0, isDirectory: isDirectory) }
    }

    /// `isExcluded` over the path's UTF-8 bytes.
    public func isExcluded(_ path: String, isDirectory: Bool) -> Bool {
        var path = path
        return path.withUTF8 { decide($0, isDirectory: isDirectory) }
    }

    /// For a file path seen without a walk (a file a peer offers, say):
    /// excluded if the file or any directory above it is excluded. As in git, a
    /// file cannot be re-included when a parent directory is excluded, since a
    /// walk would never have reached it.
    public func isExcludedWithAncestors(_ path: [UInt8]) -> Bool {
        path.withUnsafeBufferPointer { decideWithAncestors($0) }
    }

    /// `isExcludedWithAncestors` over the path's UTF-8 bytes.
    public func isExcludedWithAncestors(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { decideWithAncestors($0) }
    }

    private func decideWithAncestors(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !rules.isEmpty else { return false }
        for index in path.indices where path[index] == IgnorePattern.ASCII.slash && index > 0 {
            if decide(UnsafeBufferPointer(rebasing: path[0..<index]), isDirectory: true) { return true }
        }
        return decide(path, isDirectory: false)
    }

    private func decide(_ path: UnsafeBufferPointer<UInt8>, isDirectory: Bool) -> Bool {
        guard !path.isEmpty else { return false }
        let basenameStart = (path.lastIndex(of: IgnorePattern.ASCII.slash) ?? -1) + 1
        for rule in rules.reversed() where rule.pattern.matches(path, basenameStart: basenameStart, isDirectory: isDirectory) {
            return !rule.pattern.isNegated
        }
        return false
    }

    /// Compiles one line into `rules`, or says which line of which source failed.
    private mutating func add(_ line: ArraySlice<UInt8>, source: String, line lineNumber: Int) throws(IgnoreRules.Failure) {
        let pattern: IgnorePattern?
        do {
            pattern = try IgnorePattern.parse(line)
        } catch {
            throw .invalidPattern(source: source, line: lineNumber, pattern: Self.quoted(line), reason: error.reason)
        }
        guard let pattern else { return }
        guard rules.count < Self.maximumPatternCount else {
            throw .tooManyPatterns(source: source, line: lineNumber, limit: Self.maximumPatternCount)
        }
        rules.append(Rule(pattern: pattern, source: source, line: lineNumber))
    }

    /// The line as text for a message: invalid UTF-8 replaced, a CR dropped,
    /// and cut short when it is too long to be worth printing whole.
    private static func quoted(_ line: ArraySlice<UInt8>) -> String {
        var line = line
        if line.last == IgnorePattern.ASCII.carriageReturn { line.removeLast() }
        let shown = 80
        guard line.count > shown else { return String(decoding: line, as: UTF8.self) }
        return String(decoding: line.prefix(shown), as: UTF8.self) + "…"
    }

    /// Why rules were refused; every case names the source and line, so the
    /// user can find the typo.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A line git would ignore or never match, or one too long to accept.
        case invalidPattern(source: String, line: Int, pattern: String, reason: String)
        /// The rule on this line would be one more than `limit`.
        case tooManyPatterns(source: String, line: Int, limit: Int)

        public var description: String {
            switch self {
            case .invalidPattern(let source, let line, let pattern, let reason):
                "\(source):\(line): invalid ignore pattern \"\(pattern)\": \(reason)"
            case .tooManyPatterns(let source, let line, let limit):
                "\(source):\(line): more than \(limit) ignore patterns"
            }
        }
    }
}
