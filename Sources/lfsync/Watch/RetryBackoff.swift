/// How long `watch` waits before dialling an unreachable peer again: 5 s,
/// doubling to at most 5 minutes, back to 5 s once it answers. A peer that
/// appears on DNS-SD is dialled at once whatever the back-off says.
struct RetryBackoff {
    static let first: Duration = .seconds(5)
    static let longest: Duration = .seconds(300)

    private(set) var delay: Duration = RetryBackoff.first
    private(set) var retryAt: ContinuousClock.Instant?

    /// - Returns: how long until the next attempt.
    mutating func failed(at now: ContinuousClock.Instant) -> Duration {
        let wait = delay
        retryAt = now + wait
        delay = min(delay * 2, Self.longest)
        return wait
    }

    mutating func succeeded() {
        delay = Self.first
        retryAt = nil
    }

    /// Dial at once at the next chance (the peer was seen on the network).
    mutating func retryNow(at now: ContinuousClock.Instant) {
        retryAt = now
    }

    func isDue(at now: ContinuousClock.Instant) -> Bool {
        retryAt.map { $0 <= now } ?? true
    }
}
