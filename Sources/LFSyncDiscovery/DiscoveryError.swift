/// Why advertising (or configuring discovery) failed. Browsing problems arrive
/// as `DiscoveryEvent.unavailable` instead, because a stream cannot throw later.
public enum DiscoveryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The mechanism cannot work here, e.g. no avahi-daemon. Static peers still work.
    case unavailable(reason: String)
    /// The DNS-SD layer refused or lost the registration (`code` is the DNS-SD error).
    case registrationFailed(code: Int32, message: String)
    /// The instance name is taken and this mechanism does not rename.
    case nameConflict(String)
    /// The advertisement cannot be expressed (empty name, port 0, over-long device ID, ...).
    case invalidAdvertisement(String)
    /// A `host:port` peer address that does not parse.
    case invalidPeerAddress(String)
    /// This mechanism has nothing to advertise with (static peers).
    case unsupported(String)
    /// The registration was not confirmed in time.
    case timedOut(String)
    /// The advertising task was cancelled before the registration was confirmed.
    case cancelled

    public var description: String {
        switch self {
        case let .unavailable(reason): "discovery unavailable: \(reason)"
        case let .registrationFailed(code, message): "DNS-SD registration failed (\(code)): \(message)"
        case let .nameConflict(name): "the service name \"\(name)\" is already taken"
        case let .invalidAdvertisement(why): "invalid advertisement: \(why)"
        case let .invalidPeerAddress(why): "invalid peer address: \(why)"
        case let .unsupported(why): "not supported: \(why)"
        case let .timedOut(why): "timed out: \(why)"
        case .cancelled: "cancelled"
        }
    }
}
