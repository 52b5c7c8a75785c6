import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncDiscovery
import LFSyncTCP
import LFSyncWire

/// One connection to the peer under test, opened the way a real device opens
/// it (Noise handshake, Hello, connection decision), after which the hostile
/// peer may send anything.
struct HostileConnection {
    let channel: SecureChannel

    /// What the peer under test did about the hostile input.
    enum Answer {
        case declined(String)
        case error(String)
        case receiptFailed(String)
        case stored
        case accepted
        case closed(String)
        case silent

        /// A clear refusal: the hostile input got nowhere.
        var isRefusal: Bool {
            switch self {
            case .declined, .error, .receiptFailed, .closed: true
            case .stored, .accepted, .silent: false
            }
        }

        var summary: String {
            switch self {
            case let .declined(reason): "declined: \(reason)"
            case let .error(message): "error: \(message)"
            case let .receiptFailed(reason): "receipt failed: \(reason)"
            case .stored: "STORED the hostile content"
            case .accepted: "ACCEPTED the hostile offer"
            case let .closed(detail): "connection closed\(detail.isEmpty ? "" : ": \(detail)")"
            case .silent: "no answer"
            }
        }
    }

    /// How an attempt to connect ended.
    enum Opening {
        case opened(HostileConnection)
        case refused(Answer)
    }

    /// Connects and handshakes; if the peer under test declines the connection
    /// itself, returns that refusal instead of a connection.
    static func open(
        to address: PeerAddress, as identity: DeviceIdentity, expecting peer: DeviceID?
    ) async throws -> Opening {
        // Longer than any wait for an answer: a silent target must show up as `.silent` (a
        // failure), never as an idle-timeout "connection closed" (which would count as refused).
        let transport = TCPTransport(configuration: .init(connectTimeout: .seconds(10), idleTimeout: .seconds(120)))
        let connection = try await transport.connect(to: address)
        let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: peer)
        try await channel.send(.hello(.init(protocolVersion: WireProtocol.version, deviceName: "mallory",
                                            softwareVersion: "hostile-peer", capabilities: [])))
        while let message = try await channel.receive() {
            switch message {
            case .hello, .ping, .pong: continue
            case let .connectionDecision(decision):
                if decision.accepted { return .opened(HostileConnection(channel: channel)) }
                await channel.close()
                return .refused(.declined(decision.reason ?? "connection declined"))
            case let .error(error):
                await channel.close()
                return .refused(.error("\(error.code): \(error.message)"))
            default:
                continue
            }
        }
        return .refused(.closed("before the connection decision"))
    }

    /// Reads until the peer under test answers `offerID` (or anything about the
    /// connection as a whole), within `timeout`.
    func answer(to offerID: UInt64, timeout: Duration) async -> Answer {
        let channel = self.channel
        return await withTaskGroup(of: Answer.self) { group in
            group.addTask {
                do {
                    while let message = try await channel.receive() {
                        switch message {
                        case let .offerReply(reply) where reply.offerID == offerID:
                            if reply.accepted { return .accepted }
                            let reason = reply.reason ?? "no reason given"
                            return .declined(reply.decision == .refused ? "refused: \(reason)" : reason)
                        case let .receipt(receipt) where receipt.offerID == offerID:
                            if case let .failed(reason) = receipt.outcome { return .receiptFailed(reason) }
                            return .stored
                        case let .error(error):
                            return .error("\(error.code): \(error.message)")
                        default:
                            continue
                        }
                    }
                    return .closed("")
                } catch {
                    if let channelError = error as? SecureChannelError, case .transport(.timedOut) = channelError { return .silent }
                    return .closed("\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .silent
            }
            let first = await group.next() ?? .silent
            group.cancelAll()
            // A receive blocked on a silent peer ends only when the connection does.
            if case .silent = first { await channel.close() }
            return first
        }
    }

    func close() async {
        await channel.close()
    }
}
