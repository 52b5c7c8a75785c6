/// A peer as discovery reports it: where to connect, and whom we expect to meet there.
///
/// Everything here is a claim by an untrusted network: `deviceID` is what the
/// peer *advertised*, and only the handshake proves it.
public struct DiscoveredPeer: Hashable, Sendable {
    /// The key of this peer in `.found`/`.lost` events: the DNS-SD service
    /// instance name, or `host:port` for a static peer.
    public var instanceName: String
    /// The advertised device ID text (TXT key `id`), or the ID pinned in
    /// configuration for a static peer. `nil` when unknown: a static peer without
    /// a pinned ID, or a DNS-SD peer whose TXT record carries no usable `id`.
    /// The handshake reveals the real ID either way.
    public var deviceID: String?
    /// The advertised protocol version (TXT key `v`), `nil` when absent or malformed.
    public var protocolVersion: UInt16?
    /// A host name to connect to (for DNS-SD the SRV target without the trailing
    /// dot, e.g. `dev-a.local`; resolving `.local` names needs nss-mdns) or an IP literal.
    public var host: String
    public var port: UInt16
    /// Numeric addresses of `host`, when discovery resolved them: IPv4 first,
    /// then IPv6, link-local IPv6 last and with its zone (`fe80::1%eth0`).
    /// Prefer these over `host`; empty when not resolved.
    public var addresses: [String]

    public init(
        instanceName: String, deviceID: String?, protocolVersion: UInt16?,
        host: String, port: UInt16, addresses: [String] = []
    ) {
        self.instanceName = instanceName
        self.deviceID = deviceID
        self.protocolVersion = protocolVersion
        self.host = host
        self.port = port
        self.addresses = addresses
    }
}
