import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncTransport

/// Connects a command's engine to the devices it names: the address from the trust list,
/// else found on DNS-SD by Device ID.
enum PeerConnector {
    /// Connects to one target. A HOST:PORT target whose device is not trusted needs a
    /// yes on the terminal; in batch mode it is refused.
    static func connect(_ target: PeerResolver.Target, sync: LocalSync, config: DeviceConfig, batch: Bool) async throws -> Peer {
        var address = target.address
        if address == nil, let id = target.deviceID {
            address = await PeerResolver.discover(id, timeout: .seconds(5), localDeviceID: sync.identity.deviceID)
        }
        guard let address else {
            throw CommandFailure(message: "no address known and not found on the local network (give one with 'lfsync trust ... --address HOST:PORT')", exitCode: .peerUnavailable)
        }
        let peer: Peer
        do { peer = try await sync.connect(to: address, expecting: target.deviceID) } catch {
            if case let .declined(reason) = error { throw CommandFailure(message: reason, exitCode: .declined) }
            // Nothing answered at that address: the usual cause is a device that is off, or
            // whose `lfsync serve` is not running.
            if case let .connectionFailed(detail) = error, detail.contains("refused") || detail.contains("timed out") || detail.contains("unreachable") {
                throw CommandFailure(message: "\(detail) — is 'lfsync serve' running on \(target.label)?", exitCode: .peerUnavailable)
            }
            throw error
        }
        if target.deviceID == nil, config.trusted(peer.deviceID) == nil {
            let confirmed = !batch && Prompter.isInteractive && confirm("\(address) is \"\(peer.name)\", Device ID \(peer.deviceID) — not a trusted device. Compare the ID with 'lfsync id' on that device. Send to it?")
            guard confirmed else {
                await sync.disconnect(peer)
                throw CommandFailure(message: "\(address) is \(peer.deviceID), which is not trusted ('lfsync trust \(peer.deviceID)' first)", exitCode: .declined)
            }
        }
        return peer
    }

    /// Connects to every trusted device (each once, however it is reached); a device that
    /// cannot be reached is reported on the console and left out.
    static func connectAll(_ targets: [PeerResolver.Target], sync: LocalSync, config: DeviceConfig, console: Console) async -> [Peer] {
        var peers: [Peer] = []
        for target in targets {
            do {
                let peer = try await connect(target, sync: sync, config: config, batch: true)
                if !peers.contains(where: { $0.deviceID == peer.deviceID }) { peers.append(peer) }
            } catch {
                console.error("\(target.label): \((error as? CommandFailure)?.message ?? "\(error)")")
            }
        }
        return peers
    }

    static func confirm(_ question: String) -> Bool {
        Console.writeError("\(question) [y/N] ")
        return ["y", "yes"].contains(readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
    }
}
