import Synchronization

/// The bandwidth limit of a whole run: one budget that every connection's
/// sends draw on, so `--bwlimit` caps what the run puts on the network however
/// many peers it talks to, as rsync's does for its single connection.
///
/// A token bucket that holds at most `burst` bytes and refills at `rate`,
/// kept as the one instant at which it will be empty (the "theoretical
/// arrival time" of the generic cell rate algorithm): integer arithmetic on
/// `Duration`, so a manual clock sees deadlines exactly where the rate puts
/// them, and an idle budget cannot save up more than `burst`.
///
/// A caller *reserves* its bytes at once — the bucket may go into debt — and
/// then sleeps until the debt is paid off. Callers are therefore served in
/// the order they asked, each waiting only for what was reserved before it:
/// two connections sending alike each get about half the rate, and a send
/// larger than the burst is fine, it just waits longer. The debt is never
/// more than the reservations still waiting (at most one per waiting caller),
/// so it stays bounded and is repaid as time passes.
///
/// The clock is injected so tests drive the budget with a manual clock
/// instead of sleeping.
public final class BandwidthBudget: Sendable {
    /// The clock seen as time elapsed since the budget was made: the instant
    /// type of an `any Clock<Duration>` is unknown here, and a `Duration` from
    /// a fixed start is all the arithmetic needs.
    private protocol ElapsedClock: Sendable {
        func elapsed() -> Duration
        func sleep(untilElapsed deadline: Duration) async throws
    }

    private struct AnchoredClock<C: Clock>: ElapsedClock where C.Duration == Duration {
        let clock: C
        let start: C.Instant

        func elapsed() -> Duration { start.duration(to: clock.now) }

        func sleep(untilElapsed deadline: Duration) async throws {
            try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil)
        }
    }

    public let rate: TransferRate
    /// The most bytes that may go out at once after the budget was idle.
    public let burst: Int

    private let clock: any ElapsedClock
    /// How long the rate takes to refill a full burst.
    private let burstTime: Duration
    /// When the bucket is (or will be) empty, as time since the start: before
    /// `now - burstTime` it is full, after `now` it is in debt.
    private let emptyAt: Mutex<Duration>

    /// - Parameters:
    ///   - burst: the bucket's size in bytes; by default max(64 KiB, a tenth of a
    ///     second at `rate`), enough for one send of a typical frame without
    ///     waiting. 0 (or less) makes every send wait its full time.
    public init(rate: TransferRate, clock: any Clock<Duration> = ContinuousClock(), burst: Int? = nil) {
        self.rate = rate
        let burst = max(0, burst ?? max(64 * 1024, Int(clamping: rate.bytesPerSecond / 10)))
        self.burst = burst
        self.clock = Self.anchor(clock)
        burstTime = Self.time(for: burst, at: rate, roundingUp: false)
        // Full from the start: empty one burst's refill time ago.
        emptyAt = Mutex(.zero - burstTime)
    }

    /// Opens the existential, so the clock's own instant type can be kept.
    private static func anchor<C: Clock>(_ clock: C) -> any ElapsedClock where C.Duration == Duration {
        AnchoredClock(clock: clock, start: clock.now)
    }

    /// Waits until `byteCount` bytes may go out.
    ///
    /// Returns at once when the bucket holds them (0 or fewer bytes never
    /// wait); otherwise the bytes are reserved now and the call sleeps until the
    /// rate has covered them, so later callers queue up behind.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while it has to
    ///   wait (also when it was cancelled before). The bytes then never go out,
    ///   so the reservation is returned — when nobody reserved after it. When
    ///   somebody did, it is kept: their deadlines already count it, and handing
    ///   it to a newcomer would let that newcomer overtake them and the budget
    ///   burst past its size; the cost is at most one reservation's worth of
    ///   unused time.
    public func spend(_ byteCount: Int) async throws {
        guard byteCount > 0 else { return }
        let cost = Self.time(for: byteCount, at: rate, roundingUp: true)
        let (now, deadline) = emptyAt.withLock { emptyAt -> (Duration, Duration) in
            // Read under the lock, so reservations are made in the order of the times they see.
            let now = clock.elapsed()
            // An idle budget holds at most one burst.
            emptyAt = max(emptyAt, now - burstTime) + cost
            return (now, emptyAt)
        }
        guard deadline > now else { return }
        do {
            try await clock.sleep(untilElapsed: deadline)
        } catch {
            emptyAt.withLock { emptyAt in
                if emptyAt == deadline { emptyAt = deadline - cost }
            }
            throw error
        }
    }

    /// How long `byteCount` bytes take at `rate`, to the attosecond: rounded up
    /// for a send (never faster than the rate), down for the burst (never more).
    private static func time(for byteCount: Int, at rate: TransferRate, roundingUp: Bool) -> Duration {
        // At most 2⁶³ bytes × 10¹⁸ attoseconds: well inside Duration's 128 bits.
        let total = Duration.seconds(1) * byteCount
        let quotient = total / rate.bytesPerSecond
        guard roundingUp, quotient * rate.bytesPerSecond < total else { return quotient }
        return quotient + Duration(secondsComponent: 0, attosecondsComponent: 1)
    }
}
