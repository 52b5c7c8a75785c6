import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// The devices a `watch` sends to, re-resolved whenever the config changes:
/// named ones (`--to`) while they stay trusted, or every trusted device (`--all`).
struct WatchTargets: Sendable {
    struct Target: Sendable {
        var label: String
        var deviceID: DeviceID
        var address: PeerAddress?
    }

    let names: [String]
    let all: Bool
    let localDeviceID: DeviceID
    private(set) var targets: [Target]

    init(names: [String], all: Bool, config: DeviceConfig, localDeviceID: DeviceID) throws {
        self.names = names
        self.all = all
        self.localDeviceID = localDeviceID
        targets = []
        try update(config, strict: true)
    }

    /// - Parameter strict: at start-up a name that is not a trusted device is a usage
    ///   error; later (after an `untrust`) it is dropped from the targets instead.
    mutating func update(_ config: DeviceConfig, strict: Bool = false) throws {
        let resolver = PeerResolver(config: config, localDeviceID: localDeviceID)
        var resolved: [Target] = []
        for name in names {
            do {
                let target = try resolver.resolve(name)
                guard let id = target.deviceID, target.trusted != nil else {
                    throw UsageError(message: "watch sends only to trusted devices ('\(name)' is not one)",
                                     hint: "'lfsync trust DEVICE-ID --address HOST:PORT' first.")
                }
                resolved.append(Target(label: target.label, deviceID: id, address: target.address))
            } catch {
                if strict { throw error }
            }
        }
        if all {
            for peer in config.peers {
                if let target = try? resolver.resolve(peer.name), let id = target.deviceID {
                    resolved.append(Target(label: target.label, deviceID: id, address: target.address))
                }
            }
        }
        var seen = Set<DeviceID>()
        targets = resolved.filter { seen.insert($0.deviceID).inserted }
        if strict, targets.isEmpty {
            throw CommandFailure(message: "no trusted peers to send to ('lfsync trust' adds one)", exitCode: .usage)
        }
    }
}
