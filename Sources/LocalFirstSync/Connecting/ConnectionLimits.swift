/// How many connections `serve` holds at once, so that one device on the LAN
/// cannot take every descriptor (or every byte of memory) a receiver has, and
/// strangers cannot crowd out the devices it trusts.
///
/// A connection is a *stranger's* from `accept()` until it is accepted:
/// first while it shakes hands (until its Hello, at most
/// `WireProtocol.setUpTimeout`), then, if its device is not trusted, while a
/// person decides (up to the consent timeout). A trusted device's connection
/// leaves the stranger caps the moment its Hello proves who it is.
///
/// Strangers are counted by source *network*: an IPv4 address, or an IPv6
/// address's /64 prefix (one host can cycle through its /64 at will). Both
/// stranger caps together stay well under `total`, so the rest is always
/// room for trusted devices; and a full handshake cap takes a newcomer by
/// dropping the oldest handshake of the busiest network, not by refusing
/// the newcomer — so a trusted device is never locked out by strangers who
/// merely hold handshakes open.
public struct ConnectionLimits: Sendable, Equatable {
    /// Connections held at once, of every kind.
    public var total: Int
    /// Connections held at once from one source address (exact, not by network).
    public var perAddress: Int
    /// Handshakes under way at once (accept to Hello).
    public var unauthenticated: Int
    /// Handshakes under way at once from one network.
    public var unauthenticatedPerAddress: Int
    /// Connections of untrusted devices waiting for a person's answer, at once.
    public var awaitingConsent: Int
    /// Of those, from one network.
    public var awaitingConsentPerAddress: Int

    public init(total: Int = 64, perAddress: Int = 16, unauthenticated: Int = 32, unauthenticatedPerAddress: Int = 8,
                awaitingConsent: Int = 8, awaitingConsentPerAddress: Int = 2) {
        self.total = total
        self.perAddress = perAddress
        self.unauthenticated = unauthenticated
        self.unauthenticatedPerAddress = unauthenticatedPerAddress
        self.awaitingConsent = awaitingConsent
        self.awaitingConsentPerAddress = awaitingConsentPerAddress
    }
}
