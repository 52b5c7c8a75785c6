import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncTransport
import LFSyncTCP
import LFSyncWire
import LFSyncSystem

/// A device that lies about what it holds, or stops answering while asked: what an
/// offload must not count as a copy (ARCHITECTURE.md, "What the ledger knows").
enum HostileHolder: String, CaseIterable {
    /// Answers every content "held and verified", with a made-up proof.
    case claim
    /// Answers "held and verified" without any proof, whatever was asked.
    case noProof = "no-proof"
    /// Receives the check and never answers.
    case silent
    /// Hangs up as soon as a check arrives.
    case hangUp = "hang-up"

    /// Accepts connections one after another until killed; `ready` gets the bound address.
    func serve(on address: PeerAddress, as identity: DeviceIdentity, ready: @Sendable (PeerAddress) -> Void,
               report: @escaping @Sendable (String) -> Void) async throws {
        let transport = TCPTransport(configuration: .init(connectTimeout: .seconds(5), idleTimeout: nil))
        let listener = try await transport.listen(on: address)
        ready(listener.localAddress)
        while true {
            let connection = try await listener.accept()
            do { try await answer(over: connection, as: identity, report: report) } catch {
                report("connection ended: \(error)")
            }
        }
    }

    private func answer(over connection: any Connection, as identity: DeviceIdentity, report: @Sendable (String) -> Void) async throws {
        let channel = try await SecureChannel.accept(over: connection, identity: identity)
        guard case .hello? = try await channel.receive() else { return }
        try await channel.send(.hello(.init(protocolVersion: WireProtocol.version, deviceName: "false-holder",
                                            softwareVersion: "hostile-peer", capabilities: WireCapabilities.supported)))
        try await channel.send(.connectionDecision(.init(accepted: true, reason: nil)))
        while let message = try await channel.receive() {
            switch message {
            case let .holdingCheck(check):
                report("holding check of \(check.contents.count) contents, proof \(check.wantsProof)")
                switch self {
                case .claim:
                    let answers = check.contents.map { _ in
                        WireMessage.HoldingReport.Answer.heldVerified(verifiedAt: Int64(Date().timeIntervalSince1970 * 1000),
                                                                      proof: Hash256(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }))
                    }
                    try await channel.send(.holdingReport(.init(requestID: check.requestID, answers: answers)))
                case .noProof:
                    let answers = check.contents.map { _ in WireMessage.HoldingReport.Answer.heldVerified(verifiedAt: 1, proof: nil) }
                    try await channel.send(.holdingReport(.init(requestID: check.requestID, answers: answers)))
                case .silent:
                    continue
                case .hangUp:
                    await channel.close()
                    return
                }
            case let .ping(ping):
                try await channel.send(.pong(.init(nonce: ping.nonce)))
            default:
                continue
            }
        }
    }
}
