/// Creates connections: the seam between the engine and the network.
///
/// Two implementations: `TCPTransport` (real sockets, one epoll reactor thread) and
/// `InMemoryTransport` (a deterministic in-process network with fault injection), so the
/// engine's behaviour under resets, delays and refusals is tested without timing luck.
public protocol Transport: Sendable {
    /// Connects to `address`, resolving a host name first if needed; `timeout` bounds the
    /// whole attempt, resolution included.
    ///
    /// - Throws: `.connectionRefused`, `.timedOut(.connect)`, `.hostUnreachable`,
    ///   `.nameResolutionFailed`, `.invalidAddress`, `.cancelled`.
    func connect(to address: PeerAddress, timeout: Duration) async throws(TransportError) -> any Connection

    /// Starts listening on `address`: port 0 picks an ephemeral port (see
    /// `Listener.localAddress`); host `::` listens on every IPv6 and IPv4 address where the
    /// system allows dual-stack sockets, `0.0.0.0` on every IPv4 address.
    ///
    /// - Throws: `.addressInUse`, `.addressNotAvailable`, `.invalidAddress`.
    func listen(on address: PeerAddress) async throws(TransportError) -> any Listener
}
