import LFSyncSystem

/// A yes/no answered at most once: by a person, by policy, or by the clock.
/// Whoever comes first wins; the waiter is resumed exactly once.
final class OneShotDecision: Sendable {
    private struct Answer {
        var accepted: Bool
        /// The "no" came from the clock, not from a person or the policy.
        var expired: Bool
    }

    private let answered = Eventual<Answer>()

    /// Records `answer` unless one was already given; returns whether it counted.
    @discardableResult
    func decide(_ answer: Bool, expiring: Bool = false) -> Bool {
        answered.resolve(Answer(accepted: answer, expired: expiring))
    }

    var answer: Bool? { answered.value?.accepted }
    var hasExpired: Bool { answered.value?.expired ?? false }

    /// Waits for the answer; an unanswered question is a "no" after `timeout` on `clock`.
    func wait(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Bool {
        let timer = Deadline.after(timeout, on: clock) { [self] in decide(false, expiring: true) }
        defer { timer.cancel() }
        return await answered.wait().accepted
    }

    /// As `wait(timeout:clock:)`, or nil as soon as the waiting task is cancelled (the
    /// connection that asked has ended).
    func waitUnlessCancelled(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Bool? {
        let timer = Deadline.after(timeout, on: clock) { [self] in decide(false, expiring: true) }
        defer { timer.cancel() }
        return await answered.waitUnlessCancelled()?.accepted
    }
}
