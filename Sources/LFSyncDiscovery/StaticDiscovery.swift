/// Peers configured by address (`--peer nas.lan:7000`, the config file), for
/// networks without multicast or devices without avahi.
///
/// Each stream reports every configured peer as `.found` at once, then stays
/// open (nothing ever changes) until the consumer stops, like every other
/// discovery stream — so merging it with DNS-SD never ends early. Whether a
/// peer is actually up is learned by connecting, not here.
public struct StaticDiscovery: Discovery {
    public let peers: [StaticPeerAddress]

    /// Duplicates (same `host:port`) are reported once, the first one winning.
    public init(peers: [StaticPeerAddress]) {
        var seen = Set<String>()
        self.peers = peers.filter { seen.insert($0.description).inserted }
    }

    /// Parses each `host:port`; the first invalid one throws, naming it.
    public init(parsing addresses: [String]) throws(DiscoveryError) {
        var parsed: [StaticPeerAddress] = []
        for address in addresses {
            parsed.append(try StaticPeerAddress(parsing: address))
        }
        self.init(peers: parsed)
    }

    public func events() -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        for peer in peers {
            continuation.yield(.found(peer.discoveredPeer))
        }
        // The handler holds the continuation, which keeps the stream open until
        // its consumer goes away (the handler then runs and is released).
        continuation.onTermination = { _ in _ = continuation }
        return stream
    }

    /// Static peers are configured on the *other* side; there is nothing to announce.
    public func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle {
        throw .unsupported("static peers are configured on the connecting side; nothing to advertise")
    }
}
