import LFSyncContent
import LFSyncCrypto

/// Why a sync operation failed, in words a user can act on.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    case connectionFailed(String)
    /// The peer (or its user) said no, or did not answer in time.
    case declined(reason: String)
    /// The peer did not answer in time.
    case timedOut(String)
    case notConnected(DeviceID)
    case protocolViolation(String)
    /// The peer sent a message that does not decode (a chunk whose zstd output
    /// is not the length it declared, say): answered with Error code 2.
    case malformedMessage(String)
    case peerFailed(String)
    case noLibrary
    /// An asset sent without its library: it was not found by a scan (`Asset.library`).
    case unknownLibrary(ContentID)
    case cancelled
    /// Something failed on this side (a bug or a local resource), not the peer's doing.
    case localFailure(String)

    public var description: String {
        switch self {
        case let .connectionFailed(reason): "connection failed: \(reason)"
        case let .declined(reason): "declined: \(reason)"
        case let .timedOut(reason): "timed out: \(reason)"
        case let .notConnected(id): "not connected to \(id.shortForm)"
        case let .protocolViolation(reason): "protocol violation: \(reason)"
        case let .malformedMessage(reason): "bad message from peer: \(reason)"
        case let .peerFailed(reason): "peer reported an error: \(reason)"
        case .noLibrary: "this device has no library to receive into"
        case let .unknownLibrary(content): "asset \(content.hash.shortHex) was not found by a scan: say which library it is in"
        case .cancelled: "cancelled"
        case let .localFailure(reason): reason
        }
    }
}
