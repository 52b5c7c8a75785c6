import Synchronization
import LFSyncTransport
import LFSyncSystem

/// A deterministic in-process network shared by in-memory transports.
///
/// Give each simulated device its own transport (`transport(host:)`): a device listening
/// on `[::]:7000` is reachable as `<host>:7000`, and `localhost`/`127.0.0.1`/`::1` mean the
/// device itself, so engine code written for TCP runs unchanged. Faults can be set per
/// listening address and per live connection; time (delays, idle and connect timeouts) is
/// measured on the injected clock, a `ManualClock` for fully deterministic tests. In the
/// spirit of swift-nio's `EmbeddedChannel`: no threads, no sockets, nothing left to chance.
public final class InMemoryNetwork: Sendable {
    let clock: any Clock<Duration>

    private struct ListenerEntry {
        weak var listener: InMemoryListener?
        var id: UInt64
    }

    private struct State {
        var listeners: [PeerAddress: ListenerEntry] = [:]
        var faults: [PeerAddress: InMemoryFaults] = [:]
        var links: [ObjectIdentifier: InMemoryLink] = [:]
        var nextPort: [String: UInt16] = [:]
        var nextListenerID: UInt64 = 0
    }

    private let state = LockedState(State())

    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// A transport for the device named `host`.
    public func transport(host: String = "localhost",
                          configuration: InMemoryTransport.Configuration = .init()) -> InMemoryTransport {
        InMemoryTransport(network: self, host: host, configuration: configuration)
    }

    /// Faults for every later connection to `address` (a listener's `localAddress`).
    public func setFaults(_ faults: InMemoryFaults, for address: PeerAddress) {
        state.withLock { $0.faults[address] = faults }
    }

    public func removeFaults(for address: PeerAddress) {
        _ = state.withLock { $0.faults.removeValue(forKey: address) }
    }

    /// Resets every open connection to `address`: the device dropped off the network.
    public func resetConnections(to address: PeerAddress) {
        let links = state.withLock { $0.links.values.filter { $0.listenerAddress == address } }
        for link in links { link.reset() }
    }

    /// Connections with at least one end still open: 0 after a test means nothing leaked.
    public var openConnectionCount: Int {
        state.withLock { $0.links.count }
    }

    // MARK: Used by transports, listeners and links

    func register(listenerAt address: PeerAddress,
                  settings: InMemoryLink.EndpointSettings) throws(TransportError) -> InMemoryListener {
        try state.withLock { state throws(TransportError) -> InMemoryListener in
            var address = address
            if address.port == 0 { address.port = Self.ephemeralPort(for: address.host, in: &state) }
            if state.listeners[address]?.listener != nil { throw .addressInUse }
            state.nextListenerID += 1
            let listener = InMemoryListener(network: self, localAddress: address, id: state.nextListenerID,
                                            endpointSettings: settings)
            state.listeners[address] = ListenerEntry(listener: listener, id: listener.id)
            return listener
        }
    }

    func unregister(_ address: PeerAddress, id: UInt64) {
        state.withLock { state in
            if state.listeners[address]?.id == id { state.listeners[address] = nil }
        }
    }

    func linkFinished(_ link: InMemoryLink) {
        _ = state.withLock { $0.links.removeValue(forKey: ObjectIdentifier(link)) }
    }

    func connect(from host: String, to address: PeerAddress, timeout: Duration,
                 settings: InMemoryLink.EndpointSettings) async throws(TransportError) -> InMemoryConnection {
        let faults = state.withLock { $0.faults[address] ?? .none }
        switch faults.connect {
        case .accept: break
        case .refuse: throw .connectionRefused
        case .unreachable: throw .hostUnreachable
        case .hang:
            do {
                try await clock.sleep(for: timeout)
            } catch {
                throw .cancelled
            }
            throw .timedOut(.connect)
        }
        let opened = state.withLock { state -> (InMemoryLink, InMemoryListener, PeerAddress)? in
            guard let listener = state.listeners[address]?.listener else { return nil }
            let local = PeerAddress(host: host, port: Self.ephemeralPort(for: host, in: &state))
            let link = InMemoryLink(network: self, listenerAddress: address, connector: settings,
                                    listener: listener.endpointSettings, faults: faults)
            state.links[ObjectIdentifier(link)] = link
            return (link, listener, local)
        }
        guard let (link, listener, local) = opened else { throw .connectionRefused }
        let accepted = InMemoryConnection(link: link, side: .listener, localAddress: address, remoteAddress: local)
        guard listener.enqueue(accepted) else { throw .connectionRefused }
        return InMemoryConnection(link: link, side: .connector, localAddress: local, remoteAddress: address)
    }

    /// Ephemeral ports count up from 49152 per host, so addresses are reproducible run to run.
    private static func ephemeralPort(for host: String, in state: inout State) -> UInt16 {
        let port = state.nextPort[host] ?? 49152
        state.nextPort[host] = port == .max ? 49152 : port + 1
        return port
    }
}
