/// At most one log line per interval for an event that can come thousands of
/// times a second (refused connections in a flood): the first line goes out,
/// the rest are counted into the next one. Time is passed in, so tests need
/// no clock.
struct RateLimitedLog: Sendable {
    let interval: Duration
    private var lastLine: ContinuousClock.Instant?
    private var suppressed = 0

    init(interval: Duration) {
        self.interval = interval
    }

    /// The line to log now, or nil when it is counted for later.
    mutating func note(_ line: String, at now: ContinuousClock.Instant = .now) -> String? {
        if let lastLine, now - lastLine < interval {
            suppressed += 1
            return nil
        }
        lastLine = now
        defer { suppressed = 0 }
        return suppressed == 0 ? line : "\(line) (and \(suppressed) more like it since the last such line)"
    }
}
