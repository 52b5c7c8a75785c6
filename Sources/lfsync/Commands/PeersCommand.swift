import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync peers [--timeout S] [--json]`: devices nearby (DNS-SD) and trusted ones.
struct PeersCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct Row: Encodable {
        var name: String
        var deviceID: String?
        var address: String?
        var trusted: Bool
        /// Its offers are accepted without asking (false when not trusted).
        var autoAccept: Bool
        /// It may pull from this device (false when not trusted).
        var allowPull: Bool
        var seen: Bool

        init(name: String, deviceID: String?, address: String?, trusted: DeviceConfig.TrustedPeer?, seen: Bool) {
            self.name = name
            self.deviceID = deviceID
            self.address = address
            self.trusted = trusted != nil
            autoAccept = trusted?.autoAccept ?? false
            allowPull = trusted?.allowPull ?? false
            self.seen = seen
        }

        var flags: String {
            var flags: [String] = []
            if trusted { flags += ["trusted", DeviceConfig.TrustedPeer.permissions(autoAccept: autoAccept, allowPull: allowPull)] }
            if !seen { flags.append("not seen") }
            return flags.joined(separator: ", ")
        }
    }

    func run() async throws -> ExitCode {
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let seconds = try arguments.value(Self.timeout) ?? 3
        let discovery = DNSSDDiscovery(configuration: .init(localDeviceID: identity.deviceID.description))
        var found: [String: DiscoveredPeer] = [:]
        var unavailable: String?
        let events = discovery.events()
        let collected = await withTaskGroup(of: Optional<([String: DiscoveredPeer], String?)>.self) { group in
            group.addTask {
                var seen: [String: DiscoveredPeer] = [:]
                for await event in events {
                    switch event {
                    case let .found(peer): seen[peer.instanceName] = peer
                    case let .lost(name): seen[name] = nil
                    case let .unavailable(reason): return (seen, reason)
                    }
                }
                return (seen, nil)
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            // Collect until the timer fires; the browse task reports what it saw when cancelled.
            var result: ([String: DiscoveredPeer], String?) = ([:], nil)
            if let first = await group.next(), let value = first {
                result = value
            }
            group.cancelAll()
            for await value in group { if let value { result = value } }
            return result
        }
        found = collected.0
        unavailable = collected.1
        var rows: [Row] = []
        for peer in found.values.sorted(by: { $0.instanceName < $1.instanceName }) {
            let id = peer.deviceID.flatMap { try? DeviceID(parsing: $0) }
            let address = PeerAddress(host: peer.addresses.first ?? peer.host, port: peer.port).description
            rows.append(Row(name: peer.instanceName, deviceID: id?.description, address: address,
                            trusted: id.flatMap { config.trusted($0) }, seen: true))
        }
        for trusted in config.peers where !rows.contains(where: { $0.deviceID == trusted.deviceID }) {
            rows.append(Row(name: trusted.name, deviceID: trusted.deviceID, address: trusted.address, trusted: trusted, seen: false))
        }
        if let unavailable { console.note("discovery unavailable: \(unavailable)") }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(rows))
        } else {
            for row in rows {
                let flags = row.flags
                console.result("\(row.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(row.deviceID ?? "(no ID advertised)")  \(row.address ?? "-")\(flags.isEmpty ? "" : "  (\(flags))")")
            }
            if rows.isEmpty { console.note("no devices found") }
        }
        return .success
    }
}

extension PeersCommand: LFSyncCommand {
    static let timeout = Option<Double>("timeout", valueName: "SECONDS", help: "How long to browse (default 3).",
                                       expected: "a number of seconds, more than 0 and at most 600") { Double($0).flatMap { $0 > 0 && $0 <= 600 ? $0 : nil } }

    static let spec = CommandSpec(
        name: "peers",
        abstract: "Discover nearby devices and list trusted ones",
        discussion: "Browses the local network over DNS-SD for a few seconds and lists each device found (name, Device ID, address, whether it is trusted and, if so, whether its offers are auto-accepted and whether it may pull), followed by trusted devices that were not seen. Without a running avahi-daemon only trusted devices with a known address are listed, with a note.",
        options: [timeout.spec, LFSyncCommands.json.spec],
        examples: ["lfsync peers", "lfsync peers --timeout 10 --json"]
    )
}
