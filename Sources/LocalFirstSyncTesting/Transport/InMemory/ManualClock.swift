import Synchronization

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

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// `waitForSleepers(count:)` callers.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func readyWatchers() -> [CheckedContinuation<Void, Never>] {
            let count = sleepers.count
            let ready = watchers.filter { $0.count <= count }.map(\.continuation)
            watchers.removeAll { $0.count <= count }
            return ready
        }
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checking cancellation and registering under one lock: `onCancel` (which runs
                // after the flag is set, and takes the same lock) either finds the sleeper or
                // the check here sees the flag.
                enum Outcome { case due, cancelled, sleeping([CheckedContinuation<Void, Never>]) }
                let outcome = state.withLock { state -> Outcome in
                    if deadline <= state.now { return .due }
                    if Task.isCancelled { return .cancelled }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .sleeping(state.readyWatchers())
                }
                switch outcome {
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .sleeping(let watchers): for watcher in watchers { watcher.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping: the way a test knows the code under
    /// test has reached its wait before it advances time.
    public func waitForSleepers(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
