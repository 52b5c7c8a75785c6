import LFSyncTransport

/// The `Transport` of one simulated device on an `InMemoryNetwork`.
public struct InMemoryTransport: Transport {
    public struct Configuration: Sendable, Equatable {
        /// Used by `connect(to:)` without an explicit timeout.
        public var connectTimeout: Duration
        /// A `receive()` waiting longer than this (on the network's clock) throws
        /// `.timedOut(.idle)`; nil waits forever.
        public var idleTimeout: Duration?
        /// Unread bytes in one direction at or above which `send` suspends. There are no
        /// kernel buffers on top, so backpressure shows up exactly at this bound.
        public var sendQueueLimitBytes: Int
        /// The largest chunk one `receive()` returns; set it to 1 to make a peer's messages
        /// arrive byte by byte and exercise reassembly.
        public var receiveChunkSize: Int

        public init(connectTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(60),
                    sendQueueLimitBytes: Int = 1 << 20, receiveChunkSize: Int = 64 << 10) {
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.sendQueueLimitBytes = sendQueueLimitBytes
            self.receiveChunkSize = receiveChunkSize
        }
    }

    public let network: InMemoryNetwork
    /// This device's name on the network.
    public let host: String
    public let configuration: Configuration

    /// A transport on a network of its own (host "localhost"), for tests that need one device
    /// talking to itself.
    public init(configuration: Configuration = .init()) {
        self.init(network: InMemoryNetwork(), host: "localhost", configuration: configuration)
    }

    init(network: InMemoryNetwork, host: String, configuration: Configuration) {
        self.network = network
        self.host = host
        self.configuration = configuration
    }

    var endpointSettings: InMemoryLink.EndpointSettings {
        .init(sendQueueLimit: configuration.sendQueueLimitBytes, receiveChunkSize: configuration.receiveChunkSize,
              idleTimeout: configuration.idleTimeout)
    }

    public func connect(to address: PeerAddress) async throws(TransportError) -> any Connection {
        try await connect(to: address, timeout: configuration.connectTimeout)
    }

    public func connect(to address: PeerAddress, timeout: Duration) async throws(TransportError) -> any Connection {
        guard address.port != 0 else { throw .invalidAddress("cannot connect to port 0 (\(address))") }
        return try await network.connect(from: host, to: resolve(address), timeout: timeout, settings: endpointSettings)
    }

    public func listen(on address: PeerAddress) async throws(TransportError) -> any Listener {
        // Any other name is accepted too: a test may give each listener a name of its own
        // (`mem-<uuid>:1`) instead of modelling devices.
        try network.register(listenerAt: resolve(address), settings: endpointSettings)
    }

    /// Loopback and wildcard names mean this device (`host`).
    private func resolve(_ address: PeerAddress) -> PeerAddress {
        switch address.host.lowercased() {
        case "localhost", "127.0.0.1", "::1", "::", "0.0.0.0", "":
            PeerAddress(host: host, port: address.port)
        default:
            address
        }
    }
}
