/// Misbehaviour to inject into the in-memory network, per listening address (applies to
/// every later connection to it) or per live connection.
///
/// Every fault is deterministic: a cut happens at an exact byte count, a delay is measured
/// on the network's clock (a `ManualClock` in tests), and delivery is never reordered.
public struct InMemoryFaults: Sendable, Equatable {
    /// What a `connect` to the address does.
    public enum ConnectBehavior: Sendable, Equatable {
        case accept
        /// Fails at once with `.connectionRefused` (nobody listening, or a firewall reject).
        case refuse
        /// Fails at once with `.hostUnreachable` (the device left the network).
        case unreachable
        /// Never answers: the connect fails with `.timedOut(.connect)` after its timeout
        /// (a dropped SYN).
        case hang
    }

    public var connect: ConnectBehavior
    /// Once this many bytes have been delivered in a faulted direction, the connection is
    /// reset: the receiver gets exactly these bytes, then `.connectionReset` (so does the
    /// other direction after what was already in flight), and sends on either side throw
    /// `.connectionReset`.
    public var cutAfterBytes: Int?
    /// Once this many bytes have been delivered in a faulted direction, the receiver sees an
    /// orderly end of stream and later bytes are silently dropped: a peer that stops early.
    public var closeAfterBytes: Int?
    /// Extra latency of every delivery (data and end of stream) in a faulted direction.
    public var delay: Duration
    /// The directions `cutAfterBytes`, `closeAfterBytes` and `delay` apply to (each direction
    /// counts its own bytes).
    public var direction: InMemoryDirection

    public init(connect: ConnectBehavior = .accept, cutAfterBytes: Int? = nil, closeAfterBytes: Int? = nil,
                delay: Duration = .zero, direction: InMemoryDirection = .both) {
        self.connect = connect
        self.cutAfterBytes = cutAfterBytes
        self.closeAfterBytes = closeAfterBytes
        self.delay = delay
        self.direction = direction
    }

    public static let none = InMemoryFaults()
    public static let refuse = InMemoryFaults(connect: .refuse)
    public static let unreachable = InMemoryFaults(connect: .unreachable)
    public static let hang = InMemoryFaults(connect: .hang)

    public static func cutAfter(bytes: Int, direction: InMemoryDirection = .both) -> InMemoryFaults {
        InMemoryFaults(cutAfterBytes: bytes, direction: direction)
    }

    public static func closeAfter(bytes: Int, direction: InMemoryDirection = .both) -> InMemoryFaults {
        InMemoryFaults(closeAfterBytes: bytes, direction: direction)
    }

    public static func delay(_ delay: Duration, direction: InMemoryDirection = .both) -> InMemoryFaults {
        InMemoryFaults(delay: delay, direction: direction)
    }
}
