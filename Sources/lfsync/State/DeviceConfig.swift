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

        init(name: String, deviceID: String, address: String?, autoAccept: Bool, allowPull: Bool) {
            self.name = name
            self.deviceID = deviceID
            self.address = address
            self.autoAccept = autoAccept
            self.allowPull = allowPull
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
