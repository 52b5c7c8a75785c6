/// Accepts incoming connections on one local address.
public protocol Listener: Sendable {
    /// The bound address, with the actual port when an ephemeral one (0) was asked for.
    var localAddress: PeerAddress { get }

    /// The next incoming connection, first come first served among concurrent callers.
    ///
    /// - Throws: `.closed` once the listener is closed (pending accepts included), `.cancelled`.
    func accept() async throws(TransportError) -> any Connection

    /// Stops listening; idempotent. Connections already accepted are not affected.
    func close() async
}
