import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// This device's name and the devices it trusts, kept as JSON in the state
/// home. The file is read as untrusted input: a bad Device ID or address in it
/// is reported with the file's path, never trusted silently.
struct DeviceConfig: Codable, Sendable {
    struct TrustedPeer: Codable, Sendable, Hashable {
        var name: String
        var deviceID: String
        var address: String?
        /// Its offers are accepted without asking.
        var autoAccept: Bool
        /// It may pull: be offered everything this device serves that it lacks.
        var allowPull: Bool
        /// What its syncs' deletions do here (nil: `.asked`).
        var deletions: Deletions?

        /// Whether this device applies a trusted device's deletions (PROTOCOL.md, "Syncing").
        /// Archive semantics are the default: a device that only receives keeps every file
        /// unless the sender asks (`push --delete`) or this device mirrors that one.
        enum Deletions: String, Codable, Sendable, CaseIterable {
            /// Applied when its push asks (`--delete`), else recorded and the file kept.
            case asked
            /// Always applied: this device mirrors that one.
            case mirror
            /// Never applied: recorded, and the file kept (an archive).
            case keep
        }

        init(name: String, deviceID: String, address: String?, autoAccept: Bool, allowPull: Bool, deletions: Deletions? = nil) {
            self.name = name
            self.deviceID = deviceID
            self.address = address
            self.autoAccept = autoAccept
            self.allowPull = allowPull
            self.deletions = deletions
        }

        /// Whether a sync from it applies deletions here, given what its request asks.
        func appliesDeletions(asked: Bool) -> Bool {
            switch deletions ?? .asked {
            case .asked: asked
            case .mirror: true
            case .keep: false
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            deviceID = try container.decode(String.self, forKey: .deviceID)
            address = try container.decodeIfPresent(String.self, forKey: .address)
            autoAccept = try container.decode(Bool.self, forKey: .autoAccept)
            // Configs from before pulls had a permission of their own let every auto-accepted
            // device pull. That was the hole; reading them as "no pull" closes it, and
            // 'lfsync trust ID --allow-pull' opens it again for the devices that should.
            allowPull = try container.decodeIfPresent(Bool.self, forKey: .allowPull) ?? false
            deletions = try container.decodeIfPresent(Deletions.self, forKey: .deletions)
        }

        /// Both permissions in words, as `peers` and `status` show them — what *this* device
        /// lets the other do, said so, since "pull: no" alone reads as the other refusing
        /// this one. "no" is worth seeing too.
        static func permissions(autoAccept: Bool, allowPull: Bool) -> String {
            "this device accepts its pushes unasked: \(autoAccept ? "yes" : "no"), lets it pull: \(allowPull ? "yes" : "no")"
        }
    }

    var name: String
    var peers: [TrustedPeer] = []

    static let defaultPort: UInt16 = 7878

    var trustPolicy: TrustPolicy {
        TrustPolicy(peers.compactMap { peer in
            (try? DeviceID(parsing: peer.deviceID)).map {
                TrustPolicy.Entry(deviceID: $0, acceptsConnections: true, acceptsOffers: peer.autoAccept, mayPull: peer.allowPull)
            }
        })
    }

    func trusted(_ id: DeviceID) -> TrustedPeer? {
        peers.first { (try? DeviceID(parsing: $0.deviceID)) == id }
    }
}
