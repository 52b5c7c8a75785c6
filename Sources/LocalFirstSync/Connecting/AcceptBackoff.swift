/// How long to wait after a failed `accept()` before trying again: 5 ms,
/// doubling to at most 1 s, back to the start after a success. Short enough
/// that a burst of EMFILE costs trusted peers little; long enough that a
/// listener whose every accept fails does not spin a core.
struct AcceptBackoff: Sendable {
    static let first: Duration = .milliseconds(5)
    static let longest: Duration = .seconds(1)
    private var next = AcceptBackoff.first

    /// The wait before the next attempt.
    mutating func failed() -> Duration {
        let delay = next
        next = min(next * 2, Self.longest)
        return delay
    }

    mutating func succeeded() {
        next = Self.first
    }
}
