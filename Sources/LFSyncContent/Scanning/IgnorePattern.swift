/// One line of an ignore file, compiled once so that matching a path is a walk
/// over tokens rather than a re-parse of the pattern text for every file.
///
/// The semantics are git's own, not a re-reading of `man gitignore`: where the
/// manual and git disagree, git wins, because users check their rules with
/// `git check-ignore` and expect the same answer. The parsing mirrors
/// `dir.c` (`parse_path_pattern`, `trim_trailing_spaces`, `match_basename`,
/// `match_pathname`); the token set mirrors `wildmatch.c` with `WM_PATHNAME`.
/// Matching is case-sensitive, as git is with `core.ignorecase=false`, because
/// Linux names are byte strings.
struct IgnorePattern: Sendable {
    /// What one pattern can ask of the text.
    enum Token: Sendable, Equatable {
        /// One exact byte (a plain or backslash-escaped character).
        case byte(UInt8)
        /// One byte out of a set: `?` or a bracket expression; never `/`.
        case set(ByteSet)
        /// `*`, and any `**` that is not at a component boundary: `[^/]*`.
        case star
        /// A `**` at a boundary with nothing but the end (or an escaped `\/`)
        /// after it: `.*`, so `foo/**` takes everything inside `foo`.
        case anyString
        /// A `**/` at a boundary, slash included: zero or more whole
        /// directories, `(.*/)?`, so `a/**/b` takes `a/b` as well as `a/x/y/b`.
        case directories

        /// The tokens that always take exactly one byte; the matcher compares
        /// them by position before it starts any search.
        var isFixedWidth: Bool {
            switch self {
            case .byte, .set: true
            case .star, .anyString, .directories: false
            }
        }

        func accepts(_ byte: UInt8) -> Bool {
            switch self {
            case .byte(let wanted): byte == wanted
            case .set(let set): set.contains(byte)
            case .star, .anyString, .directories: false
            }
        }
    }

    /// Why a line was refused; the caller adds where it came from.
    struct Invalid: Error, Sendable, Equatable {
        let reason: String
    }

    /// The longest line accepted: bounds the work (and memory) one rule can cost per path.
    static let maximumLineLength = 4096

    /// A `!` rule: a match re-includes instead of excluding.
    let isNegated: Bool
    /// A trailing `/`: only directories match.
    let directoryOnly: Bool
    /// No `/` in the pattern: matched against the last path component, so at
    /// any depth (as if it began with `**/`).
    let matchesBasename: Bool
    let tokens: [Token]
    /// Fixed-width tokens at the front and at the back, compared by position.
    private let headCount: Int
    private let tailCount: Int
    /// Every token takes one byte: the text's length must equal the token count.
    private let isFixedWidth: Bool

    private init(isNegated: Bool, directoryOnly: Bool, matchesBasename: Bool, tokens: [Token]) {
        self.isNegated = isNegated
        self.directoryOnly = directoryOnly
        self.matchesBasename = matchesBasename
        self.tokens = tokens
        let head = tokens.prefix(while: \.isFixedWidth).count
        isFixedWidth = head == tokens.count
        headCount = head
        tailCount = isFixedWidth ? 0 : tokens.reversed().prefix(while: \.isFixedWidth).count
    }

    // MARK: - Parsing

    /// Compiles one line (without its line feed; a single trailing CR is dropped,
    /// as git does). Returns nil for a line that can match nothing: blank, a
    /// comment, or a pattern that is empty once `!`, the trailing `/` and the
    /// leading `/` are taken off (git keeps those, but they never match).
    ///
    /// Throws for the patterns git accepts but silently never matches (a lone
    /// trailing backslash, an unterminated `[`, an unknown `[:class:]`), so the
    /// user hears about a typo instead of wondering why a file still syncs; and
    /// for a NUL byte, which git would treat as the end of the line.
    static func parse(_ raw: ArraySlice<UInt8>) throws(Invalid) -> IgnorePattern? {
        var line = raw
        if line.last == ASCII.carriageReturn { line.removeLast() }
        guard line.count <= maximumLineLength else {
            throw Invalid(reason: "longer than \(maximumLineLength) bytes")
        }
        guard !line.isEmpty, line.first != ASCII.hash else { return nil }
        guard !line.contains(0) else { throw Invalid(reason: "contains a NUL byte") }

        line = trimmingTrailingSpaces(line)
        var isNegated = false
        if line.first == ASCII.exclamation {
            isNegated = true
            line.removeFirst()
        }
        var directoryOnly = false
        if line.last == ASCII.slash {
            directoryOnly = true
            line.removeLast()
        }
        let matchesBasename = !line.contains(ASCII.slash)
        if !matchesBasename, line.first == ASCII.slash { line.removeFirst() }
        guard !line.isEmpty else { return nil }

        let tokens = try tokenize(Array(line))
        return IgnorePattern(isNegated: isNegated, directoryOnly: directoryOnly, matchesBasename: matchesBasename, tokens: tokens)
    }

    /// git's `trim_trailing_spaces`: spaces (not tabs) at the end go, unless a
    /// backslash escapes the first of them; a line ending in a lone backslash
    /// is left alone (and then refused by the tokenizer).
    private static func trimmingTrailingSpaces(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var firstTrailingSpace: Int?
        var index = line.startIndex
        while index < line.endIndex {
            switch line[index] {
            case ASCII.space:
                if firstTrailingSpace == nil { firstTrailingSpace = index }
            case ASCII.backslash:
                index += 1
                if index == line.endIndex { return line }
                firstTrailingSpace = nil
            default:
                firstTrailingSpace = nil
            }
            index += 1
        }
        guard let cut = firstTrailingSpace else { return line }
        return line[line.startIndex..<cut]
    }

    /// The bytes wildmatch treats specially (git's `is_glob_special`).
    private static func isGlobSpecial(_ byte: UInt8) -> Bool {
        byte == ASCII.star || byte == ASCII.question || byte == ASCII.openBracket || byte == ASCII.backslash
    }

    /// Turns the pattern (flags already taken off) into tokens.
    ///
    /// A run of two or more stars is special only right after a `/`, at the
    /// start, or where the pattern's literal prefix ends (git compares that
    /// prefix on its own and hands wildmatch the rest, whose start then counts
    /// as a boundary: `a/b**/c` matches `a/b/x/c` in git, so it does here), and
    /// only when the end, `/` or `\/` follows. Anything else is a plain `*`.
    private static func tokenize(_ pattern: [UInt8]) throws(Invalid) -> [Token] {
        let literalPrefixEnd = pattern.firstIndex(where: isGlobSpecial) ?? pattern.count
        var tokens: [Token] = []
        tokens.reserveCapacity(pattern.count)
        var index = 0
        while index < pattern.count {
            let byte = pattern[index]
            switch byte {
            case ASCII.backslash:
                guard index + 1 < pattern.count else {
                    throw Invalid(reason: "ends with a lone backslash, which git never matches (write \\\\ for a backslash)")
                }
                tokens.append(.byte(pattern[index + 1]))
                index += 2
            case ASCII.question:
                tokens.append(.set(.allButSlash))
                index += 1
            case ASCII.openBracket:
                let (set, next) = try bracketExpression(pattern, openingAt: index)
                tokens.append(.set(set))
                index = next
            case ASCII.star:
                var end = index
                while end < pattern.count, pattern[end] == ASCII.star { end += 1 }
                if end - index >= 2, index == 0 || index == literalPrefixEnd || pattern[index - 1] == ASCII.slash {
                    if end == pattern.count {
                        tokens.append(.anyString)
                        index = end
                        continue
                    }
                    if pattern[end] == ASCII.slash {
                        tokens.append(.directories)
                        index = end + 1
                        continue
                    }
                    if pattern[end] == ASCII.backslash, end + 1 < pattern.count, pattern[end + 1] == ASCII.slash {
                        tokens.append(.anyString)
                        index = end
                        continue
                    }
                }
                tokens.append(.star)
                index = end
            default:
                tokens.append(.byte(byte))
                index += 1
            }
        }
        return tokens
    }

    /// Parses `[...]` starting at `open` exactly as wildmatch walks it: `!` or
    /// `^` negates, a `]` first is literal, `\` escapes, `a-z` is a range (a `-`
    /// first or last is literal), `[:name:]` is a POSIX class on ASCII, and a
    /// `[:` without a closing `:]` is a literal `[`. Returns the set (never
    /// containing `/`) and the index after the closing `]`.
    private static func bracketExpression(_ pattern: [UInt8], openingAt open: Int) throws(Invalid) -> (ByteSet, Int) {
        let unterminated = Invalid(reason: "unterminated bracket expression, which git never matches (write \\[ for a literal [)")
        var index = open + 1
        guard index < pattern.count else { throw unterminated }
        let negated = pattern[index] == ASCII.exclamation || pattern[index] == ASCII.caret
        if negated { index += 1 }
        guard index < pattern.count else { throw unterminated }
        var set = ByteSet()
        var previous: UInt8 = 0  // 0: no byte a `-` could start a range from
        repeat {
            let byte = pattern[index]
            if byte == ASCII.backslash {
                index += 1
                guard index < pattern.count else { throw unterminated }
                set.insert(pattern[index])
                previous = pattern[index]
            } else if byte == ASCII.dash, previous != 0, index + 1 < pattern.count, pattern[index + 1] != ASCII.closeBracket {
                index += 1
                var upper = pattern[index]
                if upper == ASCII.backslash {
                    index += 1
                    guard index < pattern.count else { throw unterminated }
                    upper = pattern[index]
                }
                set.insert(from: previous, through: upper)
                previous = 0
            } else if byte == ASCII.openBracket, index + 1 < pattern.count, pattern[index + 1] == ASCII.colon {
                let nameStart = index + 2
                guard let close = pattern[nameStart...].firstIndex(of: ASCII.closeBracket) else { throw unterminated }
                if close == nameStart || pattern[close - 1] != ASCII.colon {
                    set.insert(ASCII.openBracket)  // no ":]": a literal "["
                    previous = ASCII.openBracket
                } else {
                    let name = pattern[nameStart..<(close - 1)]
                    guard let members = ByteSet.posixClass(name) else {
                        throw Invalid(reason: "unknown character class [:\(String(decoding: name, as: UTF8.self)):], which git never matches")
                    }
                    set.formUnion(members)
                    previous = 0
                    index = close
                }
            } else {
                set.insert(byte)
                previous = byte
            }
            index += 1
            guard index < pattern.count else { throw unterminated }
        } while pattern[index] != ASCII.closeBracket
        if negated { set.invert() }
        set.remove(ASCII.slash)
        return (set, index + 1)
    }

    // MARK: - Matching

    /// Whether this pattern matches `path` (library-relative, no leading or
    /// trailing slash); `basenameStart` is the index after its last `/`.
    func matches(_ path: UnsafeBufferPointer<UInt8>, basenameStart: Int, isDirectory: Bool) -> Bool {
        if directoryOnly, !isDirectory { return false }
        return matches(path, from: matchesBasename ? basenameStart : 0, to: path.count)
    }

    /// The whole of `text[lower..<upper]` against the tokens. Fixed-width
    /// tokens at either end are compared by position; what is left goes to a
    /// set-of-states simulation that costs at most O(tokens × bytes) however
    /// the stars are arranged (no backtracking to blow up).
    private func matches(_ text: UnsafeBufferPointer<UInt8>, from lower: Int, to upper: Int) -> Bool {
        let length = upper - lower
        if isFixedWidth {
            guard length == tokens.count else { return false }
            for offset in 0..<length where !tokens[offset].accepts(text[lower + offset]) { return false }
            return true
        }
        guard length >= headCount + tailCount else { return false }
        for offset in 0..<headCount where !tokens[offset].accepts(text[lower + offset]) { return false }
        let tailStart = tokens.count - tailCount
        for offset in 0..<tailCount where !tokens[tailStart + offset].accepts(text[upper - tailCount + offset]) {
            return false
        }
        let textStart = lower + headCount
        let textEnd = upper - tailCount
        if tailStart - headCount == 1 {
            switch tokens[headCount] {
            case .star: return !(textStart..<textEnd).contains { text[$0] == ASCII.slash }
            case .anyString: return true
            case .directories: return textStart == textEnd || text[textEnd - 1] == ASCII.slash
            case .byte, .set: break
            }
        }
        return simulate(tokensFrom: headCount, to: tailStart, text: text, from: textStart, to: textEnd)
    }

    /// A Thompson-style simulation: the set of token positions reachable after
    /// each byte. State `2t` waits at token `t`; state `2t+1` is inside the
    /// directories of a `**/` at `t`, where only a `/` may lead on to `t+1`.
    private func simulate(tokensFrom first: Int, to end: Int, text: UnsafeBufferPointer<UInt8>, from lower: Int, to upper: Int) -> Bool {
        let count = end - first
        let stateCount = 2 * count + 2
        let accepting = 2 * count
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * stateCount) { storage in
            storage.initialize(repeating: 0)
            let marks = UnsafeMutableBufferPointer(rebasing: storage[0..<stateCount])
            var current = UnsafeMutableBufferPointer(rebasing: storage[stateCount..<(2 * stateCount)])
            var next = UnsafeMutableBufferPointer(rebasing: storage[(2 * stateCount)...])
            var currentCount = 0
            var nextCount = 0
            var generation = 1

            func add(_ state: Int) -> Bool {
                guard marks[state] != generation else { return false }
                marks[state] = generation
                next[nextCount] = state
                nextCount += 1
                return true
            }
            /// Adds token `position` and everything reachable from it without reading a byte.
            func enter(_ position: Int) {
                var position = position
                while add(2 * position), position < count {
                    switch tokens[first + position] {
                    case .star, .anyString:
                        position += 1
                    case .directories:
                        _ = add(2 * position + 1)
                        position += 1
                    case .byte, .set:
                        return
                    }
                }
            }

            enter(0)
            swap(&current, &next)
            currentCount = nextCount
            for offset in lower..<upper {
                let byte = text[offset]
                generation += 1
                nextCount = 0
                for index in 0..<currentCount {
                    let state = current[index]
                    let position = state >> 1
                    if state & 1 == 1 {
                        _ = add(state)
                        if byte == ASCII.slash { enter(position + 1) }
                        continue
                    }
                    guard position < count else { continue }
                    switch tokens[first + position] {
                    case .byte(let wanted): if byte == wanted { enter(position + 1) }
                    case .set(let set): if set.contains(byte) { enter(position + 1) }
                    case .star: if byte != ASCII.slash { enter(position) }
                    case .anyString: enter(position)
                    case .directories: break  // its moves belong to the state inside it
                    }
                }
                guard nextCount > 0 else { return false }
                swap(&current, &next)
                currentCount = nextCount
            }
            return marks[accepting] == generation
        }
    }
}

extension IgnorePattern {
    /// A set of bytes as a 256-bit map: a bracket expression costs one test per byte.
    struct ByteSet: Sendable, Equatable {
        private var low: UInt64 = 0, lowMiddle: UInt64 = 0, highMiddle: UInt64 = 0, high: UInt64 = 0

        /// `?`: any byte but `/`.
        static let allButSlash: ByteSet = {
            var set = ByteSet()
            set.invert()
            set.remove(ASCII.slash)
            return set
        }()

        func contains(_ byte: UInt8) -> Bool {
            let bit = UInt64(1) << UInt64(byte & 63)
            switch byte >> 6 {
            case 0: return low & bit != 0
            case 1: return lowMiddle & bit != 0
            case 2: return highMiddle & bit != 0
            default: return high & bit != 0
            }
        }

        mutating func insert(_ byte: UInt8) {
            let bit = UInt64(1) << UInt64(byte & 63)
            switch byte >> 6 {
            case 0: low |= bit
            case 1: lowMiddle |= bit
            case 2: highMiddle |= bit
            default: high |= bit
            }
        }

        /// `[z-a]` is empty, as in git.
        mutating func insert(from lower: UInt8, through upper: UInt8) {
            guard lower <= upper else { return }
            for byte in lower...upper { insert(byte) }
        }

        mutating func remove(_ byte: UInt8) {
            let bit = ~(UInt64(1) << UInt64(byte & 63))
            switch byte >> 6 {
            case 0: low &= bit
            case 1: lowMiddle &= bit
            case 2: highMiddle &= bit
            default: high &= bit
            }
        }

        mutating func formUnion(_ other: ByteSet) {
            low |= other.low
            lowMiddle |= other.lowMiddle
            highMiddle |= other.highMiddle
            high |= other.high
        }

        mutating func invert() {
            low = ~low
            lowMiddle = ~lowMiddle
            highMiddle = ~highMiddle
            high = ~high
        }

        /// wildmatch's classes with git's locale-free ctype: ASCII only, so a
        /// UTF-8 byte of `é` is never `[:alpha:]`; `space` is git's (tab, LF, CR,
        /// space: no VT or FF).
        static func posixClass(_ name: ArraySlice<UInt8>) -> ByteSet? {
            let test: (UInt8) -> Bool
            switch String(decoding: name, as: UTF8.self) {
            case "alnum": test = { isAlpha($0) || isDigit($0) }
            case "alpha": test = isAlpha
            case "blank": test = { $0 == ASCII.space || $0 == ASCII.tab }
            case "cntrl": test = { $0 < 0x20 || $0 == 0x7F }
            case "digit": test = isDigit
            case "graph": test = { $0 > 0x20 && $0 < 0x7F }
            case "lower": test = { $0 >= 0x61 && $0 <= 0x7A }
            case "print": test = { $0 >= 0x20 && $0 < 0x7F }
            case "punct": test = { $0 > 0x20 && $0 < 0x7F && !isAlpha($0) && !isDigit($0) }
            case "space": test = { $0 == ASCII.space || $0 == ASCII.tab || $0 == 0x0A || $0 == ASCII.carriageReturn }
            case "upper": test = { $0 >= 0x41 && $0 <= 0x5A }
            case "xdigit": test = { isDigit($0) || ((($0 | 0x20) >= 0x61) && (($0 | 0x20) <= 0x66)) }
            default: return nil
            }
            var set = ByteSet()
            for byte in UInt8(0)...0x7F where test(byte) { set.insert(byte) }
            return set
        }

        private static func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
        private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    }

    /// The bytes the syntax gives meaning to.
    enum ASCII {
        static let tab: UInt8 = 0x09
        static let lineFeed: UInt8 = 0x0A
        static let carriageReturn: UInt8 = 0x0D
        static let space: UInt8 = 0x20
        static let exclamation: UInt8 = 0x21
        static let hash: UInt8 = 0x23
        static let star: UInt8 = 0x2A
        static let dash: UInt8 = 0x2D
        static let slash: UInt8 = 0x2F
        static let colon: UInt8 = 0x3A
        static let question: UInt8 = 0x3F
        static let openBracket: UInt8 = 0x5B
        static let backslash: UInt8 = 0x5C
        static let closeBracket: UInt8 = 0x5D
        static let caret: UInt8 = 0x5E
    }
}
