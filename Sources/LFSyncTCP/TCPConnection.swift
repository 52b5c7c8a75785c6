import LFSyncTransport

/// A TCP `Connection`: a thin handle over `TCPConnectionCore`.
///
/// The handle exists so that dropping the last reference without `close()` still closes the
/// connection (in the background): the reactor keeps the core alive while it is registered,
/// but nothing keeps the handle alive except its users.
final class TCPConnection: Connection {
    package let core: TCPConnectionCore
    package let remoteAddress: PeerAddress?
    package let localAddress: PeerAddress?

    package init(core: TCPConnectionCore) {
        self.core = core
        self.remoteAddress = SocketAddress.of(core.fd, remote: true)?.peerAddress
        self.localAddress = SocketAddress.of(core.fd, remote: false)?.peerAddress
    }

    deinit {
        core.closeInBackground()
    }

    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        try await core.send(bytes)
    }

    package func receive() async throws(TransportError) -> [UInt8]? {
        try await core.receive()
    }

    package func close() async {
        await core.close()
    }

    package func abort() async {
        await core.closeAbortively()
    }
}
