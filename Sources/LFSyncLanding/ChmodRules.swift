import LFSyncSystem
import LFSyncStore

/// rsync's `--chmod=CHMOD` rules: a comma-separated list of chmod(1)-style
/// modes that rewrite the permissions of received files and directories.
///
/// People bring these strings over from their rsync scripts, so the grammar
/// and the arithmetic are rsync's own (chmod.c, `parse_chmod` and
/// `tweak_mode`, rsync 3.4/3.5), including where rsync differs from chmod(1):
///
/// - Items: `[DF][ugoa]*` then an operator `+`, `-` or `=` and either
///   permission letters `[rwxXst]*` or one class to copy from (`g=u`, `o-g`),
///   or `[DF]` then an octal mode of at most `7777` (`D2775`, `F664`).
///   `D` limits the item to directories, `F` to everything else; rsync takes
///   `D`/`F` anywhere before the operator (`uD+x`), and so does this parser.
/// - Without a class (`+x`, `=r`) the item means `a`, *masked by the umask*
///   (rsync masks with the umask it read at start-up, as chmod(1) does:
///   `-w` under umask 022 removes only the owner's write bit). The umask is
///   taken once, at parse time — by default the process's, read without
///   changing it (`ProcessUmask`); tests and callers that want the same result
///   everywhere pass their own, `umask: 0` applying such items to every class.
///   Octal modes and items with a class are never masked.
/// - `X` adds execute only to a directory or to a file that had an execute
///   bit *before any rule ran* (rsync looks at the original mode, chmod(1) at
///   the mode so far: `u+x,a+X` on a 0644 file gives 0744 here and in rsync,
///   0755 from chmod(1)).
/// - `s` sets setuid for `u`, setgid for `g`, both for `a`; with no class or
///   only `o` it sets setuid alone (rsync's reading, not chmod(1)'s). `t`
///   sets the sticky bit whatever the class. (rsync 3.5 also forgets a `t`
///   written before such an `s`, so `o=ts` loses the sticky bit there; that
///   is an accident of its parser, and here `o=ts` means `o=st`.)
/// - `u=rw` keeps an existing setuid bit (rsync clears special bits in `=`
///   only when the item names `s`, or for a copy such as `g=u`, which clears
///   setgid).
///
/// One extension: several operators in one item, as chmod(1) allows
/// (`u+rw-x` is `u+rw,u-x`). rsync refuses those, so accepting them changes
/// no string rsync accepts.
///
/// Rules apply in order, and `apply` is pure: the receiver calls it with the
/// mode the sender supplied, so the result is what it then treats as the
/// sender's mode (rsync applies `--chmod` to the file list, never to links).
public struct ChmodRules: Sendable, Equatable {
    /// Why a `--chmod` text was refused, naming the item so a long list can be fixed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case invalid(item: String, reason: String)

        public var description: String {
            switch self {
            case .invalid(let item, let reason): "invalid --chmod item \"\(item)\": \(reason)"
            }
        }
    }

    /// Which entries an item touches.
    enum Scope: Sendable, Equatable {
        case all, directories, files
    }

    /// The operator, which decides how copied class bits combine.
    enum Operation: Sendable, Equatable {
        case add, remove, assign, octal
    }

    /// One operator of one item, compiled to rsync's masks once at parse time
    /// so applying rules to every file of a transfer is a few bit operations.
    struct Rule: Sendable, Equatable {
        var scope: Scope
        var operation: Operation
        /// Bits kept before `set` is added (rsync's ModeAND).
        var keep: UInt32
        /// Bits added (rsync's ModeOR).
        var set: UInt32
        /// The one class copied from (0o100, 0o010 or 0o001), or 0.
        var copyFrom: UInt32
        /// The classes the copied bits go to (0o111-style mask).
        var copyTo: UInt32
        /// Masks the copied bits (the umask for an item without a class).
        var copyMask: UInt32
        /// `X`: execute only for directories and already-executable files.
        var conditionalExecute: Bool
    }

    let rules: [Rule]

    /// Permission bits (rsync's CHMOD_BITS): everything above passes through.
    static let permissionBits: UInt32 = 0o7777

    /// Parses a `--chmod` text.
    ///
    /// - Parameter umask: masks items without a class, as rsync masks them
    ///   with its start-up umask; 0 applies them to all classes.
    /// - Throws: `.invalid` for an empty text, an empty item (`u+x,,g+w`,
    ///   a trailing comma), an item without operator, an unknown letter, an
    ///   octal mode above 7777 or with a digit 8 or 9, or mixing `D` and `F`.
    package init(parsing text: String, umask: UInt32 = ProcessUmask.current) throws(Failure) {
        var rules: [Rule] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            rules += try Self.parse(item: item, umask: umask & 0o777)
        }
        self.rules = rules
    }

    /// Applies the rules in order to `mode` (permission bits 0...0o7777; any
    /// file-type bits above pass through untouched) of a file or directory.
    public func apply(to mode: UInt32, isDirectory: Bool) -> UInt32 {
        let other = mode & ~Self.permissionBits
        var mode = mode & Self.permissionBits
        // rsync decides `X` on the mode as it came, not as earlier rules left it.
        let wasExecutable = mode & 0o111 != 0
        for rule in rules {
            switch rule.scope {
            case .all: break
            case .directories: guard isDirectory else { continue }
            case .files: guard !isDirectory else { continue }
            }
            let copied = Self.copiedBits(of: mode, rule)
            mode &= rule.keep
            if rule.conditionalExecute, !wasExecutable, !isDirectory {
                mode |= rule.set & ~0o111
            } else {
                mode |= rule.set
            }
            if rule.operation == .remove {
                mode &= ~copied
            } else {
                mode |= copied
            }
        }
        return mode | other
    }

    /// The bits `g=u`-style copying contributes (rsync's `mode_copy_bits`).
    private static func copiedBits(of mode: UInt32, _ rule: Rule) -> UInt32 {
        var bits: UInt32 = 0
        if rule.copyFrom & 0o100 != 0 { bits |= (mode >> 6) & 7 }
        if rule.copyFrom & 0o010 != 0 { bits |= (mode >> 3) & 7 }
        if rule.copyFrom & 0o001 != 0 { bits |= mode & 7 }
        return (rule.copyTo * bits) & rule.copyMask
    }

    // MARK: - Parsing

    private static func parse(item: Substring, umask: UInt32) throws(Failure) -> [Rule] {
        let itemText = String(item)
        func fail(_ reason: String) -> Failure { .invalid(item: itemText, reason: reason) }

        let bytes = Array(item.utf8)
        guard !bytes.isEmpty else { throw fail("empty item") }
        var scope = Scope.all
        var who: UInt32 = 0
        /// The special bits `s` means for the classes named (rsync's `topbits`).
        var whoSpecial: UInt32 = 0
        var index = 0

        // The first half: scope and classes, in any order, as rsync reads them.
        whoLoop: while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "D"):
                guard scope != .files else { throw fail("both D and F") }
                scope = .directories
            case UInt8(ascii: "F"):
                guard scope != .directories else { throw fail("both D and F") }
                scope = .files
            case UInt8(ascii: "u"): who |= 0o100; whoSpecial |= 0o4000
            case UInt8(ascii: "g"): who |= 0o010; whoSpecial |= 0o2000
            case UInt8(ascii: "o"): who |= 0o001
            case UInt8(ascii: "a"): who |= 0o111; whoSpecial |= 0o6000
            default: break whoLoop
            }
            index += 1
        }
        guard index < bytes.count else { throw fail("missing operator (+, - or =) or octal mode") }

        if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            guard who == 0 else { throw fail("an octal mode cannot follow u, g, o or a") }
            var value: UInt32 = 0
            for byte in bytes[index...] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(byte) else {
                    throw fail("'\(Character(Unicode.Scalar(byte)))' is not an octal digit")
                }
                value = value * 8 + UInt32(byte - UInt8(ascii: "0"))
                guard value <= permissionBits else { throw fail("octal mode above 7777") }
            }
            return [Rule(scope: scope, operation: .octal, keep: 0, set: value, copyFrom: 0, copyTo: 0,
                         copyMask: permissionBits, conditionalExecute: false)]
        }

        var rules: [Rule] = []
        while index < bytes.count {
            let operation: Operation
            switch bytes[index] {
            case UInt8(ascii: "+"): operation = .add
            case UInt8(ascii: "-"): operation = .remove
            case UInt8(ascii: "="): operation = .assign
            default:
                throw fail("'\(Character(Unicode.Scalar(bytes[index])))' is not a class (ugoa) or operator (+-=)")
            }
            index += 1
            var what: UInt32 = 0
            var special: UInt32 = 0
            var copyFrom: UInt32 = 0
            var conditionalExecute = false
            permissionLoop: while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "="):
                    break permissionLoop
                case UInt8(ascii: "r"), UInt8(ascii: "w"), UInt8(ascii: "x"), UInt8(ascii: "X"),
                     UInt8(ascii: "s"), UInt8(ascii: "t"):
                    guard copyFrom == 0 else { throw fail("a class to copy from cannot be combined with rwxXst") }
                    switch byte {
                    case UInt8(ascii: "r"): what |= 4
                    case UInt8(ascii: "w"): what |= 2
                    case UInt8(ascii: "x"): what |= 1
                    case UInt8(ascii: "X"): what |= 1; conditionalExecute = true
                    case UInt8(ascii: "s"): special |= whoSpecial == 0 ? 0o4000 : whoSpecial
                    default: special |= 0o1000
                    }
                case UInt8(ascii: "u"), UInt8(ascii: "g"), UInt8(ascii: "o"):
                    guard what == 0, special == 0, copyFrom == 0 else {
                        throw fail("copy from one class only (u, g or o), without rwxXst")
                    }
                    copyFrom = byte == UInt8(ascii: "u") ? 0o100 : byte == UInt8(ascii: "g") ? 0o010 : 0o001
                default:
                    throw fail("'\(Character(Unicode.Scalar(byte)))' is not a permission (rwxXst) or class (ugo)")
                }
                index += 1
            }
            rules.append(compile(scope: scope, who: who, whoSpecial: whoSpecial, operation: operation, what: what,
                                 special: special, copyFrom: copyFrom, conditionalExecute: conditionalExecute,
                                 umask: umask))
        }
        return rules
    }

    /// chmod.c's `parse_chmod` end-of-item arithmetic, for one operator.
    private static func compile(
        scope: Scope, who: UInt32, whoSpecial: UInt32, operation: Operation, what: UInt32, special: UInt32,
        copyFrom: UInt32, conditionalExecute: Bool, umask: UInt32
    ) -> Rule {
        // No class means `a`, less what the umask withholds.
        let classes = who == 0 ? 0o111 : who
        let bits = who == 0 ? (classes * what) & ~umask : classes * what
        let copyMask = who == 0 ? permissionBits & ~umask : permissionBits
        let keep: UInt32
        switch operation {
        case .add:
            keep = permissionBits
        case .remove:
            keep = permissionBits & ~(bits | special)
        case .assign, .octal:
            // `=` clears the classes' rwx; their special bits only when the item names
            // `s`, or for a copy (setuid for u, setgid for g, sticky for o).
            var cleared = classes * 7
            if special != 0 { cleared |= whoSpecial }
            if copyFrom != 0 {
                if classes & 0o100 != 0 { cleared |= 0o4000 }
                if classes & 0o010 != 0 { cleared |= 0o2000 }
                if classes & 0o001 != 0 { cleared |= 0o1000 }
            }
            keep = permissionBits & ~cleared
        }
        return Rule(scope: scope, operation: operation, keep: keep, set: operation == .remove ? 0 : bits | special,
                    copyFrom: copyFrom, copyTo: classes, copyMask: copyMask, conditionalExecute: conditionalExecute)
    }
}
