import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Turns what a user typed (a name, a Device ID or a unique prefix of one,
/// or HOST:PORT) into an address to dial and, when known, the Device ID the
/// handshake must prove.
struct PeerResolver {
    struct Target: Sendable {
        var label: String
        var deviceID: DeviceID?
        var address: PeerAddress?
        var trusted: DeviceConfig.TrustedPeer?
    }

    let config: DeviceConfig
    let localDeviceID: DeviceID

    /// - Throws: a usage error for what names no device, and for this device itself (a
    ///   device is never its own peer: not to push to, pull from, or count as a copy),
    ///   unless `allowingSelf` (for `untrust`, which removes such an entry).
    func resolve(_ text: String, allowingSelf: Bool = false) throws -> Target {
        let target = try find(text)
        if target.deviceID == localDeviceID, !allowingSelf {
            throw UsageError(message: "'\(text)' is this device itself (\(localDeviceID.shortForm))",
                             hint: "Name another device; 'lfsync peers' lists the trusted ones.")
        }
        return target
    }

    private func find(_ text: String) throws -> Target {
        if let peer = config.peers.first(where: { $0.name == text }) { return try target(for: peer) }
        let compact = text.uppercased().filter { $0.isLetter || $0.isNumber }
        if compact.count >= 4 {
            let matches = config.peers.filter { $0.deviceID.uppercased().filter { $0.isLetter || $0.isNumber }.hasPrefix(compact) }
            if matches.count == 1 { return try target(for: matches[0]) }
            if matches.count > 1 {
                throw UsageError(message: "'\(text)' matches several trusted devices: \(matches.map(\.name).joined(separator: ", "))", hint: "Type more of the Device ID, or use the name.")
            }
        }
        if let id = try? DeviceID(parsing: text) {
            return Target(label: id.shortForm, deviceID: id, address: nil, trusted: nil)
        }
        if let address = PeerAddress(parsing: text) {
            return Target(label: text, deviceID: nil, address: address, trusted: nil)
        }
        throw UsageError(message: "unknown peer '\(text)'", hint: "Use a trusted device's name ('lfsync peers' lists them), a Device ID, or HOST:PORT.")
    }

    private func target(for peer: DeviceConfig.TrustedPeer) throws -> Target {
        let id = try DeviceID(parsing: peer.deviceID)
        return Target(label: peer.name, deviceID: id, address: peer.address.flatMap(PeerAddress.init(parsing:)), trusted: peer)
    }

    /// Finds the address of a device we know only by ID, by browsing DNS-SD for up to `timeout`.
    static func discover(_ id: DeviceID, timeout: Duration, localDeviceID: DeviceID) async -> PeerAddress? {
        let discovery = DNSSDDiscovery(configuration: .init(localDeviceID: localDeviceID.description))
        let events = discovery.events()
        return await withTaskGroup(of: Optional<PeerAddress>.self) { group in
            group.addTask {
                for await event in events {
                    guard case let .found(peer) = event, let advertised = peer.deviceID,
                          (try? DeviceID(parsing: advertised)) == id else { continue }
                    let host = peer.addresses.first ?? peer.host
                    return PeerAddress(host: host, port: peer.port)
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
