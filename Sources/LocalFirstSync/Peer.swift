import LFSyncCrypto
import LFSyncStore
import LFSyncTransport

/// A device on the other end of a connection, identified by what its
/// handshake proved, never by what it claimed.
public struct Peer: Hashable, Sendable, CustomStringConvertible {
    /// The Device ID proven by the Noise handshake: the key of every ledger row.
    public let deviceID: DeviceID
    /// The name the peer gave in its Hello (untrusted, display only).
    public let name: String
    public let address: PeerAddress?

    public init(deviceID: DeviceID, name: String, address: PeerAddress? = nil) {
        self.deviceID = deviceID
        self.name = name
        self.address = address
    }

    /// The identity the sync ledger keys this peer's rows by.
    public var syncIdentity: DeviceID { deviceID }

    package var ledgerKey: PeerKey { PeerKey(rawValue: deviceID.description) }

    public var description: String { "\(name) (\(deviceID.shortForm))" }

    public static func == (lhs: Peer, rhs: Peer) -> Bool { lhs.deviceID == rhs.deviceID }
    public func hash(into hasher: inout Hasher) { hasher.combine(deviceID) }
}

/// Who a transfer goes to. An array literal of peers names a subset:
/// `sync.send(assets, from: library, to: [nas, phone])`.
public enum TransferDestination: Sendable, ExpressibleByArrayLiteral {
    case allConnectedPeers
    case peers([Peer])

    public init(arrayLiteral peers: Peer...) {
        self = .peers(peers)
    }
}
