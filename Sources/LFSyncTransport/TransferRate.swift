/// A bandwidth limit in bytes per second, as `--bwlimit=RATE` states it.
///
/// The text follows rsync's `--bwlimit` (options.c, `parse_size_arg` with the
/// default suffix `K`), because users copy the value from their rsync scripts:
///
/// - A decimal number, possibly with a fraction (`1.5M`, `.5`, `2.`), then an
///   optional unit: `B` bytes, `K`, `M`, `G`, `T`, `P` (any case).
/// - A unit alone, or followed by `iB` (`KiB`, `mib`), counts in powers of
///   1024; followed by `B` (`KB`, `mb`) in powers of 1000. Without any unit
///   the number is KiB/s, so `--bwlimit=100` is 102400 bytes/s. After `B`
///   (bytes) a further `B` or `iB` changes nothing, as in rsync.
/// - An optional `+1` or `-1` at the end moves the result by one byte
///   (`1M-1`), as rsync allows for every size option.
/// - The result is truncated to whole bytes; `0` (also `0.0`, `0K`) means no
///   limit.
///
/// Where this deliberately differs from rsync: rsync reads an empty text, or
/// a non-zero value that truncates to 0 bytes (`0.0001`), as "no limit"; both
/// are refused here, since they are almost certainly typos, and a limit that
/// silently vanishes is the worst outcome. rsync also rounds the limit to the
/// nearest KiB for its old wire format; the budget here works in bytes, so it
/// keeps the exact value. A locale's decimal comma is not accepted, only `.`.
public struct TransferRate: Sendable, Equatable, CustomStringConvertible {
    /// Why a rate text was refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case invalid(String, reason: String)

        public var description: String {
            switch self {
            case .invalid(let text, let reason): "invalid rate \"\(text)\": \(reason)"
            }
        }
    }

    /// rsync's smallest limit: below it the per-write pauses it needs would be
    /// absurdly long, so a smaller number is a mistake rather than a wish.
    public static let minimumBytesPerSecond: UInt64 = 512

    /// The largest rate accepted (rsync's `SIZE_MAX / 2`): far beyond any link, and
    /// small enough that the budget's arithmetic on it can never overflow.
    public static let maximumBytesPerSecond = UInt64(Int64.max)

    public let bytesPerSecond: UInt64

    /// A rate taken as given: tests may go below `minimumBytesPerSecond`, and
    /// anything above `maximumBytesPerSecond` is clamped to it (no link tells the
    /// difference, and the budget's arithmetic stays in range).
    ///
    /// A rate of zero traps: it would mean "never send", and "no limit" is
    /// spelled nil, not a `TransferRate`.
    public init(bytesPerSecond: UInt64) {
        precondition(bytesPerSecond > 0, "a TransferRate of 0 bytes/s would never send; no limit is nil")
        self.bytesPerSecond = min(bytesPerSecond, Self.maximumBytesPerSecond)
    }

    /// Parses a `--bwlimit` value; nil for "0" (no limit).
    ///
    /// - Throws: `.invalid` for an empty or malformed text, an unknown unit,
    ///   a negative value, a value above `maximumBytesPerSecond`, or a non-zero
    ///   value below `minimumBytesPerSecond` (512 bytes/s).
    public static func parse(_ text: String) throws(Failure) -> TransferRate? {
        func fail(_ reason: String) -> Failure { .invalid(text, reason: reason) }
        let bytes = Array(text.utf8)
        var index = 0
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }

        guard !bytes.isEmpty else { throw fail("empty; use 0 for no limit") }
        guard bytes[0] != UInt8(ascii: "-") else { throw fail("a rate cannot be negative") }

        let integerStart = index
        while isDigit(index) { index += 1 }
        let integerDigits = bytes[integerStart..<index]
        var fractionDigits = bytes[index..<index]
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while isDigit(index) { index += 1 }
            fractionDigits = bytes[fractionStart..<index]
        }
        guard !integerDigits.isEmpty || !fractionDigits.isEmpty else {
            throw fail("expected a number, optionally followed by a unit (B, K, M, G, T, P)")
        }

        // The unit letter, then how it counts; no letter means KiB.
        var powers = 1
        var base: UInt64 = 1024
        if index < bytes.count, bytes[index] != UInt8(ascii: "+"), bytes[index] != UInt8(ascii: "-") {
            switch bytes[index] | 0x20 {
            case UInt8(ascii: "b"): powers = 0
            case UInt8(ascii: "k"): powers = 1
            case UInt8(ascii: "m"): powers = 2
            case UInt8(ascii: "g"): powers = 3
            case UInt8(ascii: "t"): powers = 4
            case UInt8(ascii: "p"): powers = 5
            default: throw fail("unknown unit; use B, K, M, G, T or P, optionally followed by B or iB")
            }
            index += 1
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "b") {
                base = 1000
                index += 1
            } else if index + 1 < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "i"), bytes[index + 1] | 0x20 == UInt8(ascii: "b") {
                index += 2
            }
        }
        var multiplier: UInt64 = 1
        for _ in 0..<powers { multiplier *= base }

        var adjustment: Int64 = 0
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
           bytes[index + 1] == UInt8(ascii: "1") {
            adjustment = bytes[index] == UInt8(ascii: "+") ? 1 : -1
            index += 2
        }
        guard index == bytes.count else {
            throw fail("unexpected \"\(String(decoding: bytes[index...], as: UTF8.self))\" after the number and unit")
        }

        let isZero = (integerDigits + fractionDigits).allSatisfy { $0 == UInt8(ascii: "0") }
        if isZero, adjustment == 0 { return nil }

        let tooLarge = fail("above the maximum of \(maximumBytesPerSecond) bytes/s")
        // Whole units, exactly, then the fraction's share of one unit, truncated.
        var whole: UInt64 = 0
        for digit in integerDigits {
            let (times10, overflow1) = whole.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { throw tooLarge }
            whole = sum
        }
        let (wholeBytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw tooLarge }
        // multiplier × 0.d₁d₂…dₖ, digit by digit from the last: the carry out of d₁ is
        // the whole-byte part (t stays below 10 × multiplier ≤ 10¹⁶, so no overflow).
        var carry: UInt64 = 0
        for digit in fractionDigits.reversed() {
            carry = (UInt64(digit - UInt8(ascii: "0")) * multiplier + carry) / 10
        }
        let (total, overflow3) = wholeBytes.addingReportingOverflow(carry)
        guard !overflow3, total <= maximumBytesPerSecond else { throw tooLarge }
        var result = Int64(total)
        if adjustment < 0, result == 0 { throw fail("a rate cannot be negative") }
        guard adjustment <= 0 || result < Int64.max else { throw tooLarge }
        result += adjustment
        guard UInt64(result) >= minimumBytesPerSecond else {
            throw fail("below the minimum of \(minimumBytesPerSecond) bytes/s; use 0 for no limit")
        }
        return TransferRate(bytesPerSecond: UInt64(result))
    }

    /// The rate in the largest binary unit it reaches, to two decimals at most:
    /// `512 B/s`, `100 KiB/s`, `1.5 MiB/s` — how the CLI echoes a limit back.
    public var description: String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var level = 0
        var unit: UInt64 = 1
        while level + 1 < units.count, bytesPerSecond / unit >= 1024 {
            unit *= 1024
            level += 1
        }
        var whole = bytesPerSecond / unit
        let remainder = bytesPerSecond % unit
        // Hundredths rounded half up: ⌊(⌊200·r/u⌋ + 1) / 2⌋, in full width since 200·r may pass 2⁶⁴.
        var hundredths: UInt64 = 0
        if remainder > 0 {
            let twoHundredths = unit.dividingFullWidth(remainder.multipliedFullWidth(by: 200)).quotient
            hundredths = (twoHundredths + 1) / 2
        }
        if hundredths == 100 {
            whole += 1
            hundredths = 0
            if whole == 1024, level + 1 < units.count {
                whole = 1
                level += 1
            }
        }
        var text = String(whole)
        if hundredths > 0 {
            let digits = hundredths < 10 ? "0\(hundredths)" : String(hundredths)
            text += "." + (digits.hasSuffix("0") ? String(digits.dropLast()) : digits)
        }
        return "\(text) \(units[level])/s"
    }
}
