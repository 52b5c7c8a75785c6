/// How many connections `serve` holds at once, so that one device on the LAN
/// cannot take every descriptor (or every byte of memory) a receiver has.
///
/// A connection counts as *unauthenticated* from `accept()` until the
/// connection decision says yes: until then it is a stranger's, whoever it
/// turns out to be. Strangers get the tighter caps, and the set-up deadline
/// (`WireProtocol.setUpTimeout`) frees their slots within seconds, so a flood
/// from one address cannot lock out a trusted device at another.
public struct ConnectionLimits: Sendable, Equatable {
    /// Connections held at once, of every kind.
    public var total: Int
    /// Connections held at once from one source address.
    public var perAddress: Int
    /// Connections not yet accepted (handshake, Hello, waiting for consent).
    public var unauthenticated: Int
    /// Connections not yet accepted from one source address.
    public var unauthenticatedPerAddress: Int

    public init(total: Int = 64, perAddress: Int = 16, unauthenticated: Int = 32, unauthenticatedPerAddress: Int = 8) {
        self.total = total
        self.perAddress = perAddress
        self.unauthenticated = unauthenticated
        self.unauthenticatedPerAddress = unauthenticatedPerAddress
    }
}
