import Synchronization

/// A yes/no answered at most once: by a person, by policy, or by the clock.
/// Whoever comes first wins; the waiter is resumed exactly once.
final class OneShotDecision: Sendable {
    private struct State {
        var answer: Bool?
        /// The "no" came from the clock, not from a person or the policy.
        var expired = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())

    /// Records `answer` unless one was already given; returns whether it counted.
    @discardableResult
    func decide(_ answer: Bool, expiring: Bool = false) -> Bool {
        let waiters: [CheckedContinuation<Bool, Never>]? = state.withLock { state in
            guard state.answer == nil else { return nil }
            state.answer = answer
            state.expired = expiring
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: answer) }
        return true
    }

    var answer: Bool? { state.withLock { $0.answer } }
    var hasExpired: Bool { state.withLock { $0.expired } }

    /// Waits for the answer; an unanswered question is a "no" after `timeout` on `clock`.
    func wait(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Bool {
        let timer = Deadline.after(timeout, on: clock) { [self] in decide(false, expiring: true) }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let ready: Bool? = state.withLock { state in
                if let answer = state.answer { return answer }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
