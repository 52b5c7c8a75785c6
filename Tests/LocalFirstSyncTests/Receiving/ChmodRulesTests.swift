import Testing
import LFSyncStore
import LFSyncLanding

/// `--chmod` as rsync 3.5 applies it: every expected mode below was observed
/// with `rsync -r -p --chmod=…` on real files (as root, so set-id bits stick).
@Suite struct ChmodRulesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let rules: String
        var umask: UInt32 = 0
        let mode: UInt32
        var isDirectory = false
        let expected: UInt32

        var testDescription: String {
            "\(rules) on \(isDirectory ? "dir" : "file") \(String(mode, radix: 8)), umask \(String(umask, radix: 8))"
        }
    }

    @Test(arguments: [
        Case(rules: "u+x", mode: 0o644, expected: 0o744),
        Case(rules: "go-w", mode: 0o777, expected: 0o755),
        Case(rules: "a+X", mode: 0o644, expected: 0o644),
        Case(rules: "a+X", mode: 0o744, expected: 0o755),
        Case(rules: "a+X", mode: 0o700, isDirectory: true, expected: 0o711),
        Case(rules: "Dg+s,Fo-w", mode: 0o777, isDirectory: true, expected: 0o2777),
        Case(rules: "Dg+s,Fo-w", mode: 0o777, expected: 0o775),
        Case(rules: "D2775,F664", mode: 0o700, isDirectory: true, expected: 0o2775),
        Case(rules: "D2775,F664", mode: 0o4755, expected: 0o664),
        Case(rules: "0", mode: 0o7777, isDirectory: true, expected: 0),
        Case(rules: "Du=rwx,Dgo=rx,Fu=rw,Fgo=r", mode: 0o4777, expected: 0o4644),
        Case(rules: "Du=rwx,Dgo=rx,Fu=rw,Fgo=r", mode: 0o1000, isDirectory: true, expected: 0o1755),
        // The example of rsync(1), on a file, a directory, and an executable file.
        Case(rules: "Dg+s,ug+w,Fo-w,+X", mode: 0o604, expected: 0o624),
        Case(rules: "Dg+s,ug+w,Fo-w,+X", mode: 0o604, isDirectory: true, expected: 0o2735),
        Case(rules: "Dg+s,ug+w,Fo-w,+X", mode: 0o614, expected: 0o735),
        Case(rules: "g-s", mode: 0o2755, isDirectory: true, expected: 0o755),
        Case(rules: "+t", mode: 0o777, isDirectory: true, expected: 0o1777),
        Case(rules: "a+s", mode: 0o755, expected: 0o6755),
        Case(rules: "u=rws", mode: 0o755, expected: 0o4655),
    ])
    func appliesAsRsyncDoes(_ item: Case) throws {
        let rules = try ChmodRules(parsing: item.rules, umask: item.umask)
        #expect(rules.apply(to: item.mode, isDirectory: item.isDirectory) == item.expected)
    }

    /// Where rsync parts from chmod(1): both are rsync's behaviour, kept on purpose.
    @Test(arguments: [
        // `X` looks at the mode before any rule: chmod(1) would give 0755.
        Case(rules: "u+x,a+X", mode: 0o644, expected: 0o744),
        // `=` keeps set-id bits unless it names `s` (chmod(1) clears setuid on a file).
        Case(rules: "u=rw", mode: 0o4755, expected: 0o4655),
        Case(rules: "=", mode: 0o7777, expected: 0o7000),
        // `s` without a class, or for `o` alone, means setuid.
        Case(rules: "+s", mode: 0o644, expected: 0o4644),
        Case(rules: "o+s", mode: 0o644, expected: 0o4644),
    ])
    func keepsRsyncsDeparturesFromChmod(_ item: Case) throws {
        #expect(try ChmodRules(parsing: item.rules, umask: item.umask).apply(to: item.mode, isDirectory: item.isDirectory) == item.expected)
    }

    /// Copying one class's bits to others, and `=` clearing the target's special bit.
    @Test(arguments: [
        Case(rules: "g=u", mode: 0o4750, expected: 0o4770),
        Case(rules: "g=u", mode: 0o2704, expected: 0o774),
        Case(rules: "o-g", mode: 0o777, expected: 0o770),
        Case(rules: "o-g", mode: 0o755, expected: 0o750),
        Case(rules: "g=o,o=", umask: 0o022, mode: 0o645, expected: 0o650),
    ])
    func copiesPermissionsBetweenClasses(_ item: Case) throws {
        #expect(try ChmodRules(parsing: item.rules, umask: item.umask).apply(to: item.mode, isDirectory: item.isDirectory) == item.expected)
    }

    /// Without a class an item means `a` less the umask it is given (rsync's start-up
    /// umask); a class, or an octal mode, is never masked.
    @Test(arguments: [
        Case(rules: "+x", mode: 0o644, expected: 0o755),
        Case(rules: "+x", umask: 0o022, mode: 0o600, expected: 0o711),
        Case(rules: "+w", umask: 0o022, mode: 0o644, expected: 0o644),
        Case(rules: "=r", umask: 0o077, mode: 0o755, expected: 0o400),
        Case(rules: "=rwX", umask: 0o022, mode: 0o644, isDirectory: true, expected: 0o755),
        Case(rules: "a+w", umask: 0o022, mode: 0o644, expected: 0o666),
        Case(rules: "777", umask: 0o077, mode: 0, expected: 0o777),
    ])
    func masksClasslessItemsWithTheUmask(_ item: Case) throws {
        #expect(try ChmodRules(parsing: item.rules, umask: item.umask).apply(to: item.mode, isDirectory: item.isDirectory) == item.expected)
    }

    /// rsync refuses several operators in one item; chmod(1)'s meaning is accepted instead.
    @Test func acceptsSeveralOperatorsInOneItem() throws {
        let combined = try ChmodRules(parsing: "u+rw-x")
        #expect(combined == (try ChmodRules(parsing: "u+rw,u-x")))
        #expect(combined.apply(to: 0o500, isDirectory: false) == 0o600)
        #expect(try ChmodRules(parsing: "Fgo=r+w").apply(to: 0o777, isDirectory: false) == 0o766)
        #expect(try ChmodRules(parsing: "Fgo=r+w").apply(to: 0o777, isDirectory: true) == 0o777)
    }

    @Test func leavesTheFileTypeBitsAlone() throws {
        let regularFile: UInt32 = 0o100000
        #expect(try ChmodRules(parsing: "0").apply(to: regularFile | 0o644, isDirectory: false) == regularFile)
    }

    /// Each of these rsync 3.5 refuses too.
    @Test(arguments: [
        "", ",", "u+x,", ",u+x", "u+x,,g+w", "x", "u", "D", "ua", "DF+x", "FD+x", "D8", "9", "17777", "u2775", "775D",
        "u+q", "g=ur", "g=uo", "g+rwu", "+ x", "U+x", "u+X,", "a=r w",
    ])
    func rejects(_ text: String) {
        #expect(throws: ChmodRules.Failure.self) { try ChmodRules(parsing: text) }
    }

    @Test func namesTheBadItem() {
        #expect(throws: ChmodRules.Failure.invalid(item: "g+q", reason: "'q' is not a permission (rwxXst) or class (ugo)")) {
            try ChmodRules(parsing: "u+x,g+q")
        }
        let failure = ChmodRules.Failure.invalid(item: "", reason: "empty item")
        #expect(failure.description == "invalid --chmod item \"\": empty item")
    }
}
