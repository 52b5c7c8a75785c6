/// Readiness a registration can wait for.
struct ReactorInterest: OptionSet, Sendable {
    let rawValue: UInt8
    static let read = ReactorInterest(rawValue: 1)
    static let write = ReactorInterest(rawValue: 2)
}

/// What epoll reported for a registration. Errors and hang-ups count as both readable and
/// writable: the next `read`/`write` then reports the precise errno.
struct ReactorEvents: Sendable {
    var readable: Bool
    var writable: Bool
}
