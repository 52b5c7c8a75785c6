#if canImport(Glibc)
import Glibc
#endif

/// Times as lfsync keeps them: nanoseconds since 1970 in an `Int64`, which
/// reaches some 292 years either side (1677 to 2262).
///
/// Why a type of its own: file systems keep times far beyond that (tmpfs and
/// XFS keep 64-bit seconds), and real libraries hold files with absurd times —
/// broken cameras, extracted archives, a peer that set one. `seconds * 1e9`
/// traps on them, and a trap in the start-up scan crashed `serve` again at
/// every restart. Every conversion goes through here and saturates instead.
package enum FileTime {
    package static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// A `timespec` in nanoseconds, saturated at the ends of `Int64`.
    package static func nanoseconds(_ time: timespec) -> Int64 {
        nanoseconds(seconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
    }

    /// `seconds * 1e9 + nanoseconds`, saturated; exact wherever the result fits,
    /// including the edges, where the product alone would not (Int64.min is
    /// -9223372037 s + 145224192 ns).
    package static func nanoseconds(seconds: Int64, nanoseconds: Int64) -> Int64 {
        var seconds = seconds
        // The kernel gives 0..<1e9; anything else is clamped, not trusted.
        var rest = min(max(nanoseconds, 0), nanosecondsPerSecond - 1)
        if seconds < 0, rest > 0 {
            seconds += 1
            rest -= nanosecondsPerSecond
        }
        let (product, overflow) = seconds.multipliedReportingOverflow(by: nanosecondsPerSecond)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, carry) = product.addingReportingOverflow(rest)
        if carry { return rest < 0 ? .min : .max }
        return sum
    }

    /// The `timespec` for `timeNs`: `tv_nsec` in 0..<1e9 even before 1970. Every
    /// `Int64` has one, and `nanoseconds(_:)` gives it back exactly.
    package static func timespec(_ timeNs: Int64) -> Glibc.timespec {
        var seconds = timeNs / nanosecondsPerSecond
        var rest = timeNs % nanosecondsPerSecond
        if rest < 0 {
            seconds -= 1
            rest += nanosecondsPerSecond
        }
        return Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(rest))
    }

    /// The wall clock now.
    package static func now() -> Int64 {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return nanoseconds(time)
    }
}
