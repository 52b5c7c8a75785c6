#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncTransport
import LFSyncSystem

/// TCP over IPv4 and IPv6 with non-blocking sockets, driven by one epoll reactor thread.
///
/// Nothing here blocks a cooperative-pool thread: sockets are non-blocking, waits park a
/// continuation on the reactor, and host names are resolved on a thread of their own.
/// Each transport owns one reactor thread, which lives as long as the transport or any of
/// its connections and listeners.
public final class TCPTransport: Transport {
    public struct Configuration: Sendable, Equatable {
        /// Bounds `connect(to:)` when no explicit timeout is given.
        public var connectTimeout: Duration
        /// A `receive()` waiting longer than this throws `.timedOut(.idle)`; nil waits forever.
        public var idleTimeout: Duration?
        /// Queued-but-unsent bytes above which `send` suspends (the backpressure bound; the
        /// kernel's socket buffers come on top).
        public var sendQueueLimitBytes: Int
        /// The largest chunk one `receive()` returns; also the size of each read.
        public var receiveChunkSize: Int
        /// Bounds the flush and the wait for the peer's end of stream in `close()`.
        public var closeTimeout: Duration
        /// The `listen(2)` backlog of new listeners.
        public var listenBacklog: Int32

        public init(connectTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(60),
                    sendQueueLimitBytes: Int = 4 << 20, receiveChunkSize: Int = 256 << 10,
                    closeTimeout: Duration = .seconds(5), listenBacklog: Int32 = 128) {
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.sendQueueLimitBytes = sendQueueLimitBytes
            self.receiveChunkSize = receiveChunkSize
            self.closeTimeout = closeTimeout
            self.listenBacklog = listenBacklog
        }
    }

    public let configuration: Configuration
    private let startedReactor = LockedState<EpollReactor?>(nil)

    /// Creating a transport is free; the reactor thread starts with the first `connect` or
    /// `listen` (whose error then reports a process out of file descriptors).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The reactor, started on first use.
    package func reactor() throws(TransportError) -> EpollReactor {
        try startedReactor.withLock { reactor throws(TransportError) -> EpollReactor in
            if let reactor { return reactor }
            let started = try EpollReactor()
            reactor = started
            return started
        }
    }

    /// Connects with `configuration.connectTimeout`.
    public func connect(to address: PeerAddress) async throws(TransportError) -> any Connection {
        try await connect(to: address, timeout: configuration.connectTimeout)
    }

    public func connect(to address: PeerAddress, timeout: Duration) async throws(TransportError) -> any Connection {
        guard address.port != 0 else { throw .invalidAddress("cannot connect to port 0 (\(address))") }
        let deadline = MonotonicInstant.now().advanced(by: timeout)
        let reactor = try reactor()
        let candidates = try await NameResolver.resolve(address, passive: false, deadline: deadline, reactor: reactor)
        // Addresses in getaddrinfo's preference order (RFC 6724), one at a time within the
        // one deadline: "localhost" may be ::1 first while the peer listens on 127.0.0.1 only.
        var lastError = TransportError.connectionRefused
        for candidate in candidates {
            do {
                return try await connect(candidate, deadline: deadline, reactor: reactor)
            } catch {
                switch error {
                case .cancelled, .timedOut: throw error
                default: lastError = error
                }
            }
        }
        throw lastError
    }

    private func connect(_ address: SocketAddress, deadline: MonotonicInstant,
                         reactor: EpollReactor) async throws(TransportError) -> TCPConnection {
        let fd = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TransportError(errno: errno, operation: "socket") }
        SocketIO.configureConnected(fd)
        let status = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if status != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else {
                Glibc.close(fd)
                throw TransportError(errno: code, operation: "connect", connecting: true)
            }
            let outcome: ReactorWait<Never>.Outcome
            do {
                let registration = try reactor.register(fd: fd)
                let wait = ReactorWait<Never>(deadline: deadline)
                registration.attach(wait)
                outcome = await wait.wait(on: registration, for: .write)
                registration.cancel()
            } catch {
                Glibc.close(fd)
                throw error
            }
            switch outcome {
            case .ready:
                let pending = SocketIO.pendingError(fd)
                guard pending == 0 else {
                    Glibc.close(fd)
                    throw TransportError(errno: pending, operation: "connect", connecting: true)
                }
            case .timedOut:
                Glibc.close(fd)
                throw .timedOut(.connect)
            case .cancelled:
                Glibc.close(fd)
                throw .cancelled
            }
        }
        let registration = try Self.register(fd, with: reactor)
        let core = TCPConnectionCore(registration: registration, configuration: configuration)
        registration.attach(core)
        return TCPConnection(core: core)
    }

    /// Registers a socket we own with the reactor; on failure the socket is closed, not leaked.
    private static func register(_ fd: Int32, with reactor: EpollReactor) throws(TransportError) -> ReactorRegistration {
        do {
            return try reactor.register(fd: fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    public func listen(on address: PeerAddress) async throws(TransportError) -> any Listener {
        let deadline = MonotonicInstant.now().advanced(by: configuration.connectTimeout)
        let reactor = try reactor()
        let candidates = try await NameResolver.resolve(address, passive: true, deadline: deadline, reactor: reactor)
        guard let candidate = candidates.first else { throw .invalidAddress("\(address)") }
        let fd: Int32
        do {
            fd = try makeListeningSocket(candidate)
        } catch .system(_, EAFNOSUPPORT) where address.host == "::" {
            // No IPv6 on this host: "every address" then means every IPv4 address.
            let fallback = try await NameResolver.resolve(PeerAddress(host: "0.0.0.0", port: address.port), passive: true,
                                                          deadline: deadline, reactor: reactor)
            guard let first = fallback.first else { throw .invalidAddress("\(address)") }
            fd = try makeListeningSocket(first)
        }
        guard let local = SocketAddress.of(fd, remote: false)?.peerAddress else {
            let code = errno
            Glibc.close(fd)
            throw TransportError(errno: code, operation: "getsockname")
        }
        let registration = try Self.register(fd, with: reactor)
        let core = TCPListenerCore(registration: registration, reactor: reactor, configuration: configuration)
        registration.attach(core)
        return TCPListener(core: core, localAddress: local)
    }

    private func makeListeningSocket(_ address: SocketAddress) throws(TransportError) -> Int32 {
        let fd = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TransportError(errno: errno, operation: "socket") }
        func fail(_ operation: String) -> TransportError {
            let error = TransportError(errno: errno, operation: operation)
            Glibc.close(fd)
            return error
        }
        // Restarting a server must not wait for TIME_WAIT sockets of its previous run.
        _ = SocketIO.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
        if address.family == AF_INET6 {
            // Dual stack: an IPv6 wildcard listener also accepts IPv4 (as ::ffff:a.b.c.d).
            _ = SocketIO.setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 0)
        }
        guard address.withSockAddr({ Glibc.bind(fd, $0, $1) }) == 0 else { throw fail("bind") }
        guard Glibc.listen(fd, configuration.listenBacklog) == 0 else { throw fail("listen") }
        return fd
    }
}
