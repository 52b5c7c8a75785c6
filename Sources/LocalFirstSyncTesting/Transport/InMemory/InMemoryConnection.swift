import LFSyncTransport

/// One end of an in-memory connection.
///
/// Returned (as `any Connection`) by `InMemoryTransport`; tests that want to break a live
/// connection cast to this type and call `inject(_:)` or `reset()`.
public final class InMemoryConnection: Connection {
    public let remoteAddress: PeerAddress?
    public let localAddress: PeerAddress
    let link: InMemoryLink
    let side: InMemoryLink.Side

    init(link: InMemoryLink, side: InMemoryLink.Side, localAddress: PeerAddress, remoteAddress: PeerAddress) {
        self.link = link
        self.side = side
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
    }

    deinit {
        link.close(side)
    }

    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        try await link.send(bytes, from: side)
    }

    public func receive() async throws(TransportError) -> [UInt8]? {
        try await link.receive(at: side)
    }

    /// Closes at once: in memory there is no kernel buffer to flush, bytes already sent stay
    /// readable by the peer, followed by end of stream.
    public func close() async {
        link.close(side)
    }

    /// The same as `close()`: in memory there is nothing to flush or linger over.
    public func abort() async {
        link.close(side)
    }

    /// Applies byte faults (cut, close, delay) to this live connection. Directions are
    /// relative to the connection, not to this end: `.fromConnector` is always the
    /// connecting side's outgoing stream.
    public func inject(_ faults: InMemoryFaults) {
        link.inject(faults)
    }

    /// Resets the connection now: both ends get `.connectionReset` after what was already
    /// readable.
    public func reset() {
        link.reset()
    }
}
