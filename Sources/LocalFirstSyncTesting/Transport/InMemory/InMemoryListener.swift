import LFSyncSystem
import LFSyncTransport

/// Accepts the in-memory connections made to one address.
final class InMemoryListener: Listener {
    typealias AcceptResult = Result<InMemoryConnection, TransportError>

    private struct State: Sendable {
        var open = true
        var backlog: [InMemoryConnection] = []
    }

    let localAddress: PeerAddress
    /// Identifies this listener in the network's table (which holds it weakly, so a dropped
    /// listener stops listening like a dropped TCP socket would).
    let id: UInt64
    /// Settings of the accepted ends, from the listening transport.
    let endpointSettings: InMemoryLink.EndpointSettings
    private let network: InMemoryNetwork
    /// `accept()` waits here for a connection.
    private let state = Monitor(State())

    init(network: InMemoryNetwork, localAddress: PeerAddress, id: UInt64, endpointSettings: InMemoryLink.EndpointSettings) {
        self.network = network
        self.id = id
        self.endpointSettings = endpointSettings
        self.localAddress = localAddress
    }

    deinit {
        shutDown()
    }

    /// Queues a new connection for the first waiting `accept`; false once closed.
    func enqueue(_ connection: InMemoryConnection) -> Bool {
        state.withLock { state in
            guard state.open else { return false }
            state.backlog.append(connection)
            return true
        }
    }

    func accept() async throws(TransportError) -> any Connection {
        let result = await state.wait(orIfCancelled: AcceptResult.failure(.cancelled)) { state in
            guard state.open else { return .failure(.closed) }
            guard !state.backlog.isEmpty else { return nil }
            return .success(state.backlog.removeFirst())
        }
        return try result.get()
    }

    func close() async {
        shutDown()
    }

    /// Stops listening: pending accepts get `.closed`, connections nobody accepted are reset
    /// (their connecting side sees `.connectionReset`, as with a TCP listener closing).
    func shutDown() {
        let backlog = state.withLock { state -> [InMemoryConnection] in
            guard state.open else { return [] }
            state.open = false
            defer { state.backlog.removeAll() }
            return state.backlog
        }
        network.unregister(localAddress, id: id)
        for connection in backlog {
            connection.reset()
            connection.link.close(connection.side)
        }
    }
}
