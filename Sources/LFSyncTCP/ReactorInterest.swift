/// Readiness a registration can wait for.
package struct ReactorInterest: OptionSet, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    package static let read = ReactorInterest(rawValue: 1)
    package static let write = ReactorInterest(rawValue: 2)
}

/// What epoll reported for a registration. Errors and hang-ups count as both readable and
/// writable: the next `read`/`write` then reports the precise errno.
package struct ReactorEvents: Sendable {
    package var readable: Bool
    package var writable: Bool
}
