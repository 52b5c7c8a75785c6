#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A point on `CLOCK_MONOTONIC`, in nanoseconds.
///
/// The reactor compares deadlines on every loop turn; a plain integer is cheaper and simpler
/// than `ContinuousClock.Instant` arithmetic, and CLOCK_MONOTONIC is what epoll timeouts
/// are measured against anyway.
package struct MonotonicInstant: Comparable, Hashable, Sendable {
    package var nanoseconds: UInt64

    package static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec))
    }

    /// `self + duration`, saturating; negative durations count as zero.
    package func advanced(by duration: Duration) -> MonotonicInstant {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(duration.saturatingNanoseconds)
        return MonotonicInstant(nanoseconds: overflow ? .max : sum)
    }

    /// Milliseconds from `now` until `self`, rounded up (so a timer never fires early), for
    /// `epoll_wait`; 0 when already due.
    package func millisecondsAfter(_ now: MonotonicInstant) -> Int32 {
        guard self > now else { return 0 }
        let milliseconds = (nanoseconds - now.nanoseconds + 999_999) / 1_000_000
        return Int32(clamping: milliseconds)
    }

    package static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

extension Duration {
    /// Whole nanoseconds, clamped to `0...UInt64.max` (both components of a negative
    /// duration are negative).
    package var saturatingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflow || carry ? .max : total
    }
}
