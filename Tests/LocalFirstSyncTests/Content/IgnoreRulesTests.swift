import LFSyncContent
import Testing

/// gitignore syntax as git itself behaves; every expectation here was also
/// checked against `git check-ignore --no-index` (git 2.39).
@Suite struct IgnoreRulesTests {
    func rules(_ lines: String...) throws -> IgnoreRules {
        var rules = IgnoreRules()
        for line in lines { try rules.add(line: line, source: "test") }
        return rules
    }

    func excluded(_ lines: String..., path: String, directory: Bool = false) throws -> Bool {
        var rules = IgnoreRules()
        for line in lines { try rules.add(line: line, source: "test") }
        return rules.isExcluded(path, isDirectory: directory)
    }

    func fileRules(_ text: String) throws -> IgnoreRules {
        var rules = IgnoreRules()
        try rules.add(fileContents: Array(text.utf8), source: ".lfsyncignore")
        return rules
    }

    func reason(of line: String) -> String? {
        var rules = IgnoreRules()
        do {
            try rules.add(line: line, source: "--exclude")
            return nil
        } catch {
            guard case .invalidPattern(let source, let lineNumber, _, let reason) = error, source == "--exclude", lineNumber == 1 else {
                return "unexpected: \(error)"
            }
            return reason
        }
    }

    // MARK: - Defaults

    @Test func defaultsExcludeNASAppleWindowsAndTrashLeftovers() {
        let defaults = IgnoreRules.defaults()
        #expect(defaults.patternCount == IgnoreRules.defaultPatterns.count)
        #expect(defaults.isExcluded("@eaDir", isDirectory: true))
        #expect(defaults.isExcludedWithAncestors(Array("@eaDir/x.jpg".utf8)))
        #expect(defaults.isExcludedWithAncestors(Array("2024/@eaDir/IMG_1.JPG/SYNOPHOTO_THUMB_XL.jpg".utf8)))
        #expect(defaults.isExcluded("._IMG_1.JPG", isDirectory: false))
        #expect(defaults.isExcluded("2023/trip/._IMG_1.JPG", isDirectory: false))
        #expect(defaults.isExcluded(".Trash-1000", isDirectory: true))
        #expect(defaults.isExcludedWithAncestors(Array(".Trash-1000/files/a.jpg".utf8)))
        #expect(defaults.isExcluded("a/b/.DS_Store", isDirectory: false))
        #expect(defaults.isExcluded("Thumbs.db", isDirectory: false))
        #expect(defaults.isExcluded("desktop.ini", isDirectory: false))
        #expect(defaults.isExcluded("x/.thumbnails", isDirectory: true))
        #expect(defaults.isExcluded(".lfsync", isDirectory: true))
    }

    @Test func defaultsLeaveLookalikesAlone() {
        let defaults = IgnoreRules.defaults()
        #expect(!defaults.isExcluded("eaDir", isDirectory: true))
        #expect(!defaults.isExcludedWithAncestors(Array("eaDir/x.jpg".utf8)))
        #expect(!defaults.isExcluded("@eaDir", isDirectory: false), "@eaDir/ names directories only")
        #expect(!defaults.isExcluded(".Trash-1000", isDirectory: false))
        #expect(!defaults.isExcluded("thumbs.db", isDirectory: false), "matching is case-sensitive")
        #expect(!defaults.isExcluded("IMG_1.JPG", isDirectory: false))
        #expect(!defaults.isExcluded("@eaDir/x.jpg", isDirectory: false), "isExcluded does not look at ancestors")
    }

    @Test func laterRulesTakePrecedenceOverDefaults() throws {
        var combined = IgnoreRules.defaults()
        combined.append(try rules("!desktop.ini"))
        #expect(!combined.isExcluded("desktop.ini", isDirectory: false))
        #expect(combined.isExcluded("Thumbs.db", isDirectory: false))
        #expect(combined.patternCount == IgnoreRules.defaultPatterns.count + 1)
        #expect(IgnoreRules().isEmpty && !combined.isEmpty)
    }

    // MARK: - Lines

    @Test func blankLinesAndCommentsAddNothing() throws {
        #expect(try rules("", "   ", "# a comment", "#*.jpg").isEmpty)
        #expect(try fileRules("\n\n# only comments\n   \n").isEmpty)
        #expect(try excluded(" #x", path: " #x"), "only a # in the first column starts a comment")
    }

    @Test func escapedHashAndBangAreLiterals() throws {
        #expect(try excluded("\\#photo", path: "#photo"))
        #expect(try !excluded("\\#photo", path: "\\#photo"))
        #expect(try excluded("\\!important", path: "!important"))
        #expect(try excluded("*", "\\!important", path: "x"), "\\! is not a negation")
    }

    @Test func trailingSpacesAreTrimmedUnlessEscaped() throws {
        #expect(try excluded("foo   ", path: "foo"))
        #expect(try !excluded("foo   ", path: "foo "))
        #expect(try excluded("foo\\ ", path: "foo "))
        #expect(try excluded("foo\\  ", path: "foo "))
        #expect(try !excluded("foo\\  ", path: "foo  "))
        #expect(try excluded("foo\t", path: "foo\t"), "only spaces are trimmed, not tabs")
        #expect(try excluded("a b", path: "a b"))
    }

    // MARK: - Negation

    @Test func negationReincludesAndTheLastMatchDecides() throws {
        #expect(try !excluded("*.jpg", "!keep.jpg", path: "keep.jpg"))
        #expect(try !excluded("*.jpg", "!keep.jpg", path: "album/keep.jpg"))
        #expect(try excluded("*.jpg", "!keep.jpg", path: "other.jpg"))
        #expect(try excluded("!keep.jpg", "*.jpg", path: "keep.jpg"))
        #expect(try !excluded("!x", path: "x"))
    }

    @Test func aFileUnderAnExcludedDirectoryCannotBeReincluded() throws {
        let directory = try rules("photos/", "!photos/keep.jpg")
        #expect(directory.isExcludedWithAncestors(Array("photos/keep.jpg".utf8)))
        #expect(directory.isExcludedWithAncestors("photos/keep.jpg"))
        #expect(!directory.isExcluded("photos/keep.jpg", isDirectory: false), "the rule alone would re-include it")
        // Excluding the contents rather than the directory leaves room to re-include.
        let contents = try rules("photos/*", "!photos/keep/")
        #expect(!contents.isExcludedWithAncestors(Array("photos/keep/a.jpg".utf8)))
        #expect(contents.isExcludedWithAncestors(Array("photos/other/a.jpg".utf8)))
        #expect(contents.isExcludedWithAncestors(Array("photos/b.jpg".utf8)))
    }

    // MARK: - Slashes

    @Test func trailingSlashMatchesOnlyDirectories() throws {
        #expect(try excluded("build/", path: "build", directory: true))
        #expect(try !excluded("build/", path: "build"))
        #expect(try excluded("build/", path: "a/build", directory: true))
        #expect(try excluded("build", path: "build") && excluded("build", path: "build", directory: true))
    }

    @Test func aSlashAnchorsThePatternOtherwiseItMatchesAtAnyDepth() throws {
        #expect(try excluded("doc/frotz/", path: "doc/frotz", directory: true))
        #expect(try !excluded("doc/frotz/", path: "a/doc/frotz", directory: true))
        #expect(try excluded("frotz/", path: "a/doc/frotz", directory: true))
        #expect(try excluded("/foo", path: "foo"))
        #expect(try !excluded("/foo", path: "a/foo"))
        #expect(try excluded("foo", path: "a/b/foo"))
        #expect(try excluded("doc/*.txt", path: "doc/a.txt"))
        #expect(try !excluded("doc/*.txt", path: "doc/x/a.txt"))
        #expect(try !excluded("doc/*.txt", path: "x/doc/a.txt"))
        #expect(try excluded("*.jpg", path: "a/b/c.jpg"))
        #expect(try !excluded("*.jpg", path: "a.jpg/b"), "a slash-free pattern looks at the last component only")
    }

    // MARK: - Wildcards

    @Test func starAndQuestionMarkNeverCrossASlash() throws {
        #expect(try excluded("a?c", path: "abc"))
        #expect(try !excluded("a?c", path: "ac"))
        #expect(try !excluded("x/a?b", path: "x/a/b"))
        #expect(try excluded("a*b", path: "axxb"))
        #expect(try !excluded("x/a*b", path: "x/a/b"))
        #expect(try excluded("*/x", path: "a/x"))
        #expect(try !excluded("*/x", path: "a/b/x"))
    }

    @Test func bracketExpressions() throws {
        #expect(try excluded("[abc].jpg", path: "b.jpg"))
        #expect(try !excluded("[abc].jpg", path: "d.jpg"))
        #expect(try excluded("[a-c]x", path: "bx"))
        #expect(try !excluded("[a-c]x", path: "dx"))
        #expect(try excluded("[!a-c]x", path: "dx"))
        #expect(try !excluded("[!a-c]x", path: "bx"))
        #expect(try excluded("[^a-c]x", path: "dx"))
        #expect(try !excluded("[^a-c]x", path: "bx"))
        #expect(try excluded("[]]x", path: "]x"), "a ] first is literal")
        #expect(try excluded("[!]]x", path: "ax"))
        #expect(try !excluded("[!]]x", path: "]x"))
        #expect(try excluded("[a-]x", path: "-x") && excluded("[-a]x", path: "-x"), "a - at either end is literal")
        #expect(try excluded("[\\]]x", path: "]x"))
        #expect(try excluded("[a\\-c]x", path: "-x"))
        #expect(try !excluded("[a\\-c]x", path: "bx"), "an escaped - is not a range")
        #expect(try !excluded("[z-a]x", path: "ax"), "a reversed range is empty")
        #expect(try !excluded("x/a[/]b", path: "x/a/b"), "a bracket never matches /")
    }

    @Test func posixClassesAreASCII() throws {
        #expect(try excluded("[[:digit:]]x", path: "5x"))
        #expect(try !excluded("[[:digit:]]x", path: "ax"))
        #expect(try excluded("[[:alpha:][:digit:]]", path: "q"))
        #expect(try excluded("[[:upper:]]", path: "Q"))
        #expect(try !excluded("[[:upper:]]", path: "q"))
        #expect(try excluded("[[:space:]]s", path: "\ts"))
        #expect(try !excluded("[[:space:]]s", path: "\u{0B}s"), "git's space class has no vertical tab")
        #expect(try excluded("[[:punct:]]p", path: "_p"))
        #expect(try !excluded("[[:alpha:]]x", path: "éx"), "é is two bytes, neither ASCII")
        #expect(try excluded("q[[:alpha]w", path: "q:w") && excluded("q[[:alpha]w", path: "q[w"), "[: without :] is a literal [")
    }

    @Test func backslashEscapesTheNextCharacter() throws {
        #expect(try excluded("\\*", path: "*"))
        #expect(try !excluded("\\*", path: "a"))
        #expect(try excluded("\\?q", path: "?q"))
        #expect(try !excluded("\\?q", path: "aq"))
        #expect(try excluded("\\[x]", path: "[x]"))
        #expect(try excluded("a\\\\b", path: "a\\b"))
        #expect(try excluded("\\a", path: "a"))
    }

    // MARK: - Double stars

    @Test func leadingDoubleStarMatchesAtAnyDepth() throws {
        #expect(try excluded("**/foo", path: "foo"))
        #expect(try excluded("**/foo", path: "a/b/foo"))
        #expect(try !excluded("**/foo", path: "xfoo"))
        #expect(try excluded("**/foo/bar", path: "foo/bar"))
        #expect(try excluded("**/foo/bar", path: "x/y/foo/bar"))
    }

    @Test func trailingDoubleStarMatchesEverythingInside() throws {
        #expect(try excluded("foo/**", path: "foo/a"))
        #expect(try excluded("foo/**", path: "foo/a/b/c"))
        #expect(try !excluded("foo/**", path: "foo", directory: true), "the directory itself is not inside")
        #expect(try !excluded("foo/**", path: "a/foo/b"))
    }

    @Test func middleDoubleStarMatchesZeroOrMoreDirectories() throws {
        #expect(try excluded("a/**/b", path: "a/b"))
        #expect(try excluded("a/**/b", path: "a/x/b"))
        #expect(try excluded("a/**/b", path: "a/x/y/b"))
        #expect(try !excluded("a/**/b", path: "a/xb"))
        #expect(try !excluded("a/**/b", path: "x/a/b"))
    }

    @Test func otherDoubleStarsActLikeASingleStar() throws {
        #expect(try excluded("a**b", path: "axxb"))
        #expect(try !excluded("x/a**b", path: "x/a/b"))
        #expect(try excluded("x/**b", path: "x/ab"))
        #expect(try !excluded("x/**b", path: "x/a/b"))
        #expect(try excluded("***/foo", path: "a/foo"), "three stars are two")
        #expect(try excluded("m/**\\/n", path: "m/k/n") && !excluded("m/**\\/n", path: "m/n"))
        // git's quirk, kept: where the literal prefix ends counts as a boundary.
        #expect(try excluded("x/b**/c", path: "x/bz/y/c"))
    }

    // MARK: - Bytes

    @Test func pathsAreMatchedAsBytes() throws {
        #expect(try excluded("café/*.jpg", path: "café/x.jpg"))
        #expect(try !excluded("café/*.jpg", path: "cafe\u{301}/x.jpg"), "NFC and NFD are different names")
        #expect(try rules("café/*.jpg").isExcluded(Array("café/x.jpg".utf8), isDirectory: false))
        #expect(try !excluded("?", path: "é") && excluded("??", path: "é"), "? is one byte")
    }

    // MARK: - Files

    @Test func fileContentsWithCRLFAndAByteOrderMark() throws {
        let rules = try fileRules("\u{FEFF}*.tmp\r\n# comment\r\n\r\nkeep/\r\nlast")
        #expect(rules.patternCount == 3)
        #expect(rules.isExcluded("a.tmp", isDirectory: false))
        #expect(!rules.isExcluded("a.tmp\r", isDirectory: false))
        #expect(rules.isExcluded("keep", isDirectory: true))
        #expect(rules.isExcluded("last", isDirectory: false), "a last line without a line feed counts")
    }

    @Test func onlyOneCarriageReturnIsStripped() throws {
        #expect(try fileRules("a\r\r\n").isExcluded("a\r", isDirectory: false))
    }

    // MARK: - Errors

    @Test func patternsGitWouldNeverMatchAreRefused() {
        #expect(reason(of: "foo\\")?.hasPrefix("ends with a lone backslash") == true)
        #expect(reason(of: "foo\\/")?.hasPrefix("ends with a lone backslash") == true)
        for line in ["[abc", "a[", "[!", "[a\\", "[]", "[[:alpha:]"] {
            #expect(reason(of: line)?.hasPrefix("unterminated bracket expression") == true, "\(line)")
        }
        #expect(reason(of: "[[:foo:]]")?.hasPrefix("unknown character class [:foo:]") == true)
        #expect(reason(of: "a\u{0}b")?.hasPrefix("contains a NUL byte") == true)
        #expect(reason(of: "a\nb") == "contains a line break")
        #expect(reason(of: "foo\\\\") == nil, "an escaped backslash is fine")
    }

    @Test func aFailingFileReportsItsLineAndAddsNothing() {
        var rules = IgnoreRules()
        #expect(throws: IgnoreRules.Failure.invalidPattern(
            source: "x/.lfsyncignore", line: 3, pattern: "foo\\",
            reason: "ends with a lone backslash, which git never matches (write \\\\ for a backslash)"
        )) {
            try rules.add(fileContents: Array("ok\n# c\nfoo\\\r\n".utf8), source: "x/.lfsyncignore")
        }
        #expect(rules.isEmpty)
    }

    @Test func errorDescriptionsNameSourceAndLine() {
        let failure = IgnoreRules.Failure.invalidPattern(source: ".lfsyncignore", line: 7, pattern: "[abc", reason: "unterminated")
        #expect(failure.description == ".lfsyncignore:7: invalid ignore pattern \"[abc\": unterminated")
        #expect(IgnoreRules.Failure.tooManyPatterns(source: "f", line: 2, limit: 10).description == "f:2: more than 10 ignore patterns")
    }

    @Test func linesLongerThan4096BytesAreRefused() throws {
        #expect(reason(of: String(repeating: "a", count: 4097)) == "longer than 4096 bytes")
        #expect(reason(of: String(repeating: "a", count: 4096)) == nil)
        #expect(try excluded(String(repeating: "a", count: 4096), path: String(repeating: "a", count: 4096)))
    }

    @Test func atMost10000Rules() throws {
        var many = IgnoreRules()
        for index in 0..<IgnoreRules.maximumPatternCount { try many.add(line: "f\(index)", source: "m") }
        #expect(throws: IgnoreRules.Failure.tooManyPatterns(source: "m", line: 1, limit: 10_000)) {
            try many.add(line: "one-more", source: "m")
        }
        try many.add(line: "# comments do not count", source: "m")

        // Appending combines parts that were each bounded; adding to the result is refused.
        var combined = IgnoreRules.defaults()
        combined.append(many)
        #expect(combined.patternCount == IgnoreRules.defaultPatterns.count + 10_000)
        #expect(throws: IgnoreRules.Failure.self) { try combined.add(line: "x", source: "--exclude") }

        var fromFile = IgnoreRules()
        let text = (0...10_000).map { "f\($0)" }.joined(separator: "\n")
        #expect(throws: IgnoreRules.Failure.tooManyPatterns(source: "big", line: 10_001, limit: 10_000)) {
            try fromFile.add(fileContents: Array(text.utf8), source: "big")
        }
        #expect(fromFile.isEmpty)
    }

    // MARK: - Bounded work

    /// A backtracking matcher takes exponential time on these; they must finish at once.
    @Test func pathologicalPatternsFinishQuickly() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let run = String(repeating: "a", count: 4000)
        #expect(try !excluded("*a*a*a*a*a*a*a*a*b", path: run))
        #expect(try !excluded("*a*a*a*a*a*a*a*a*b*", path: run), "no fixed tail to reject it early")
        #expect(try excluded("*a*a*a*a*a*a*a*a*a", path: run))
        #expect(try !excluded("x/**/a**a**a**a**a**a**b*", path: "x/" + String(repeating: "a/", count: 1999) + "a"))
        #expect(try !excluded(String(repeating: "*a", count: 100) + "*c*", path: run))
        #expect(clock.now - start < .seconds(5))
    }
}
