import Synchronization

/// A yes/no answered at most once: by a person, by policy, or by the clock.
/// Whoever comes first wins; the waiter is resumed exactly once.
final class OneShotDecision: Sendable {
    private struct State {
        var answer: Bool?
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())

    /// Records `answer` unless one was already given; returns whether it counted.
    @discardableResult
    func decide(_ answer: Bool) -> Bool {
        let waiters: [CheckedContinuation<Bool, Never>]? = state.withLock { state in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: answer) }
        return true
    }

    var answer: Bool? { state.withLock { $0.answer } }

    /// Waits for the answer; an unanswered question is a "no" after `timeout` on `clock`.
    func wait(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Bool {
        let timer = Task { [self] in
            try? await clock.sleep(for: timeout)
            if !Task.isCancelled { decide(false) }
        }
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
