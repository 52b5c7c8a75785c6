#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a transport operation failed, in terms the engine can act on.
///
/// The cases are what callers branch on (retry later, mark the peer unavailable, report
/// "refused"), not the full errno space; anything unexpected keeps its errno in `.system`
/// so the message a user sees stays precise.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which wait ran out of time.
    public enum TimeoutPhase: String, Sendable, Equatable {
        /// Establishing the connection (name resolution included).
        case connect
        /// The secure-channel handshake run above the transport; reserved for those layers so
        /// every timeout a caller sees has one type.
        case handshake
        /// A `receive()` waited longer than the configured idle timeout.
        case idle
    }

    /// Nobody listens at that address (ECONNREFUSED, or an in-memory address with no listener).
    case connectionRefused
    case timedOut(TimeoutPhase)
    /// No route to the host or its network (EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN).
    case hostUnreachable
    /// The connection broke: reset by the peer, a write to a connection the peer closed, or
    /// an established connection that timed out in the kernel.
    case connectionReset
    /// This side already closed the connection or listener.
    case closed
    /// The address is already bound (EADDRINUSE).
    case addressInUse
    /// The address does not belong to this host (EADDRNOTAVAIL).
    case addressNotAvailable
    /// The address cannot be used at all (malformed, wrong family, port 0 for a connect).
    case invalidAddress(String)
    /// The host name could not be resolved.
    case nameResolutionFailed(host: String, reason: String)
    /// The waiting task was cancelled; for `send` the bytes were not queued.
    case cancelled
    /// Any other failed system call.
    case system(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .connectionRefused: "connection refused"
        case .timedOut(.connect): "timed out while connecting"
        case .timedOut(.handshake): "timed out during the handshake"
        case .timedOut(.idle): "timed out waiting for data (idle)"
        case .hostUnreachable: "host unreachable"
        case .connectionReset: "connection reset by peer"
        case .closed: "connection closed"
        case .addressInUse: "address already in use"
        case .addressNotAvailable: "address not available on this host"
        case .invalidAddress(let detail): "invalid address: \(detail)"
        case .nameResolutionFailed(let host, let reason): "cannot resolve \(host): \(reason)"
        case .cancelled: "cancelled"
        case .system(let operation, let code): "\(operation): \(String(cString: strerror(code)))"
        }
    }

    /// Maps the errno of a failed socket call.
    ///
    /// `ETIMEDOUT` means "could not connect" while connecting but "the peer vanished" on an
    /// established connection, hence the `connecting` flag.
    package init(errno code: Int32, operation: String, connecting: Bool = false) {
        switch code {
        case ECONNREFUSED: self = .connectionRefused
        case ECONNRESET, EPIPE, ECONNABORTED, ENOTCONN: self = .connectionReset
        case ETIMEDOUT: self = connecting ? .timedOut(.connect) : .connectionReset
        case EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN: self = .hostUnreachable
        case EADDRINUSE: self = .addressInUse
        case EADDRNOTAVAIL: self = .addressNotAvailable
        default: self = .system(operation: operation, errno: code)
        }
    }
}
