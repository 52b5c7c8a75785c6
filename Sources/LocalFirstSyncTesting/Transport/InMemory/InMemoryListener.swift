import Synchronization
import LFSyncTransport

/// Accepts the in-memory connections made to one address.
final class InMemoryListener: Listener {
    typealias AcceptResult = Result<InMemoryConnection, TransportError>

    private struct State {
        var open = true
        var backlog: [InMemoryConnection] = []
        var waiters: [(id: UInt64, continuation: CheckedContinuation<AcceptResult, Never>)] = []
    }

    let localAddress: PeerAddress
    /// Identifies this listener in the network's table (which holds it weakly, so a dropped
    /// listener stops listening like a dropped TCP socket would).
    let id: UInt64
    /// Settings of the accepted ends, from the listening transport.
    let endpointSettings: InMemoryLink.EndpointSettings
    private let network: InMemoryNetwork
    private let state = Mutex(State())
    private let waiterIDs = Atomic<UInt64>(0)

    init(network: InMemoryNetwork, localAddress: PeerAddress, id: UInt64, endpointSettings: InMemoryLink.EndpointSettings) {
        self.network = network
        self.id = id
        self.endpointSettings = endpointSettings
        self.localAddress = localAddress
    }

    deinit {
        shutDown()
    }

    /// Hands a new connection to the first waiting `accept`, or queues it; false once closed.
    func enqueue(_ connection: InMemoryConnection) -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<AcceptResult, Never>?? in
            guard state.open else { return .none }
            guard !state.waiters.isEmpty else {
                state.backlog.append(connection)
                return .some(nil)
            }
            return .some(state.waiters.removeFirst().continuation)
        }
        guard let waiter else { return false }
        waiter?.resume(returning: .success(connection))
        return true
    }

    func accept() async throws(TransportError) -> any Connection {
        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AcceptResult, Never>) in
                let early = state.withLock { state -> AcceptResult? in
                    guard state.open else { return .failure(.closed) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    if !state.backlog.isEmpty { return .success(state.backlog.removeFirst()) }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<AcceptResult, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    func close() async {
        shutDown()
    }

    /// Stops listening: pending accepts get `.closed`, connections nobody accepted are reset
    /// (their connecting side sees `.connectionReset`, as with a TCP listener closing).
    func shutDown() {
        let (waiters, backlog) = state.withLock { state -> ([CheckedContinuation<AcceptResult, Never>], [InMemoryConnection]) in
            guard state.open else { return ([], []) }
            state.open = false
            defer {
                state.waiters.removeAll()
                state.backlog.removeAll()
            }
            return (state.waiters.map(\.continuation), state.backlog)
        }
        network.unregister(localAddress, id: id)
        for connection in backlog {
            connection.reset()
            connection.link.close(connection.side)
        }
        for waiter in waiters { waiter.resume(returning: .failure(.closed)) }
    }
}
