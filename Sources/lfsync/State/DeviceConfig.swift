import Foundation
import LocalFirstSync

/// This device's name and the devices it trusts, kept as JSON in the state
/// home. The file is read as untrusted input: a bad Device ID or address in it
/// is reported with the file's path, never trusted silently.
struct DeviceConfig: Codable, Sendable {
    struct TrustedPeer: Codable, Sendable, Hashable {
        var name: String
        var deviceID: String
        var address: String?
        var autoAccept: Bool
    }

    var name: String
    var peers: [TrustedPeer] = []

    static let defaultPort: UInt16 = 7878

    static func load(from url: URL) throws -> DeviceConfig {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return DeviceConfig(name: ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "lfsync")
        }
        guard data.count < 4 << 20 else { throw CommandFailure(message: "\(url.path) is too large to be a config file", exitCode: .dataError) }
        let config: DeviceConfig
        do { config = try JSONDecoder().decode(DeviceConfig.self, from: data) } catch {
            throw CommandFailure(message: "\(url.path) is damaged (\(error.localizedDescription)); fix or delete it", exitCode: .dataError)
        }
        for peer in config.peers {
            guard (try? DeviceID(parsing: peer.deviceID)) != nil else {
                throw CommandFailure(message: "\(url.path): '\(peer.deviceID)' is not a valid Device ID", exitCode: .dataError)
            }
        }
        return config
    }

    func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".config.json.\(getpid())")
        try data.write(to: temporary)
        // rename(2) replaces atomically: a crash leaves the old or the new file, never half of one.
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CommandFailure(message: "cannot write \(url.path): \(reason)", exitCode: .ioError)
        }
    }

    var trustPolicy: TrustPolicy {
        TrustPolicy(peers.compactMap { peer in
            (try? DeviceID(parsing: peer.deviceID)).map { TrustPolicy.Entry(deviceID: $0, acceptsConnections: true, acceptsOffers: peer.autoAccept) }
        })
    }

    func trusted(_ id: DeviceID) -> TrustedPeer? {
        peers.first { (try? DeviceID(parsing: $0.deviceID)) == id }
    }
}
