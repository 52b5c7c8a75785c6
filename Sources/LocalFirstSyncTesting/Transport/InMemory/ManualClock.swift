import LFSyncSystem

/// A clock that only moves when told to: tests drive time with `advance(by:)` instead of
/// sleeping, so timeouts and delays are exercised deterministically and instantly.
///
/// `InMemoryNetwork` takes any `Clock<Duration>`; hand it one of these to control delivery
/// delays, idle timeouts and hanging connects.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable {
        /// Time since the clock was created.
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State: Sendable {
        var now = Instant(offset: .zero)
        /// The deadline of every task sleeping now, by sleeper.
        var sleeping: [UInt64: Instant] = [:]
        var nextID: UInt64 = 0
    }

    /// Sleepers wait here for `now` to reach their deadline, and `waitForSleepers` for them.
    private let state = Monitor(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleeping.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        // Counted as sleeping from here (what `waitForSleepers` sees) until due or cancelled.
        let id = state.withLock { state -> UInt64? in
            guard deadline > state.now else { return nil }
            state.nextID += 1
            state.sleeping[state.nextID] = deadline
            return state.nextID
        }
        guard let id else { return }
        let due = await state.wait(orIfCancelled: false) { state in
            guard deadline <= state.now else { return nil }
            // Earliest first: a sleeper due before this one, and still here, wakes first.
            guard !state.sleeping.contains(where: { $0.key != id && $0.value < deadline }) else { return nil }
            state.sleeping[id] = nil
            return true
        }
        if !due {
            state.withLock { _ = $0.sleeping.removeValue(forKey: id) }
            throw CancellationError()
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, earliest first
    /// (each sleeper's condition lets an earlier one still sleeping go first).
    public func advance(by duration: Duration) {
        state.withLock { $0.now = $0.now.advanced(by: duration) }
    }

    /// Returns once at least `count` tasks are sleeping: the way a test knows the code under
    /// test has reached its wait before it advances time.
    public func waitForSleepers(count: Int) async {
        await state.wait { $0.sleeping.count >= count ? () : nil }
    }

    /// Returns once some task sleeps until exactly `deadline`: the way a test knows that one
    /// particular timer (armed now for a known duration) is waiting. Unlike a count, it is
    /// not satisfied by another timer — one cancelled a moment ago whose task has not run
    /// yet to leave, say — so time never moves before the timer it is meant for is armed.
    public func waitForSleeper(until deadline: Instant) async {
        await state.wait { $0.sleeping.values.contains { $0.offset == deadline.offset } ? () : nil }
    }
}
