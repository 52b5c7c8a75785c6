import LFSyncTransport

/// A listening TCP socket. Accepts follow the connection pattern: `accept4` first on the
/// caller's task, and only "would block" parks the caller on the reactor.
final class TCPListener: Listener {
    package let localAddress: PeerAddress
    private let core: TCPListenerCore

    package init(core: TCPListenerCore, localAddress: PeerAddress) {
        self.core = core
        self.localAddress = localAddress
    }

    /// The listening descriptor (tests check it gets closed).
    package var descriptor: Int32 { core.fd }

    deinit {
        core.shutDown()
    }

    package func accept() async throws(TransportError) -> any Connection {
        try await core.accept()
    }

    package func close() async {
        core.shutDown()
    }
}
