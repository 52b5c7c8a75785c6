import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncWire

/// Asks one connected device whether it holds assets of ours, in checks of at most
/// `HoldingCheck.maxContents`, and judges the answers: with proof, a fresh random nonce per
/// content goes out, and a "held" answer counts only if its keyed hash equals the one
/// made here from our own bytes (`HoldingProof`).
struct HoldingChecker {
    let session: PeerSession
    let timeout: Duration
    /// Where the expected proofs are made: they read whole files.
    let disk: BlockingQueue

    func check(_ assets: [Asset], proof: Bool) async throws(SyncError) -> [ContentID: HoldingAnswer] {
        guard await session.channel.peerCapabilities.contains(.holdings) else {
            throw .declined(reason: "\(session.peer) does not answer holding checks (an older lfsync)")
        }
        var unique: [Asset] = []
        var seen = Set<ContentID>()
        for asset in assets where seen.insert(asset.contentID).inserted { unique.append(asset) }
        var answers: [ContentID: HoldingAnswer] = [:]
        for batch in Self.batches(of: unique, proof: proof) {
            for (content, answer) in try await check(batch: batch, proof: proof) { answers[content] = answer }
        }
        return answers
    }

    /// Checks within the limits of one (PROTOCOL.md, "Limits and deadlines"): at most
    /// `maxContents` contents and, with proof, at most `maxProofBytes` of them unless alone.
    static func batches(of assets: [Asset], proof: Bool, byteLimit: UInt64 = WireMessage.HoldingCheck.maxProofBytes) -> [[Asset]] {
        var batches: [[Asset]] = [], batch: [Asset] = [], bytes: UInt64 = 0
        for asset in assets {
            let over = batch.count == WireMessage.HoldingCheck.maxContents
                || (proof && !batch.isEmpty && bytes &+ asset.totalSize > byteLimit)
            if over {
                batches.append(batch)
                (batch, bytes) = ([], 0)
            }
            batch.append(asset)
            bytes &+= asset.totalSize
        }
        if !batch.isEmpty { batches.append(batch) }
        return batches
    }

    private func check(batch: [Asset], proof: Bool) async throws(SyncError) -> [ContentID: HoldingAnswer] {
        let nonces = proof ? batch.map { _ in Self.nonce() } : []
        let requestID = UInt64.random(in: 1...UInt64.max)
        let question = WireMessage.HoldingCheck(requestID: requestID, contents: batch.map(\.contentID), nonces: nonces)
        let reply = try await session.queries.ask(.holdingCheck(question), requestID: requestID, timeout: timeout)
        guard case let .holdingReport(report) = reply else { throw .protocolViolation("\(reply.type) in answer to a HoldingCheck") }
        guard let reported = report.answers else { throw .declined(reason: "\(session.peer) does not answer this device's holding checks (not trusted there)") }
        guard reported.count == batch.count else {
            throw .protocolViolation("a HoldingReport of \(reported.count) answers to a HoldingCheck of \(batch.count)")
        }
        var answers: [ContentID: HoldingAnswer] = [:]
        var claims: [(asset: Asset, claimed: Hash256, nonce: Hash256, at: Date?)] = []
        for (index, asset) in batch.enumerated() {
            switch reported[index] {
            case .notHeld:
                answers[asset.contentID] = .notHeld
            case .heldChanged:
                answers[asset.contentID] = .heldChanged
            case let .heldVerified(verifiedAt, claimed):
                let at = verifiedAt > 0 ? Date(timeIntervalSince1970: Double(verifiedAt) / 1000) : nil
                guard proof else {
                    answers[asset.contentID] = .heldVerified(at: at, proven: false)
                    continue
                }
                guard let claimed else {
                    answers[asset.contentID] = .proofFailed
                    continue
                }
                claims.append((asset, claimed, nonces[index], at))
            }
        }
        for (claim, answer) in zip(claims, await judge(claims)) { answers[claim.asset.contentID] = answer }
        return answers
    }

    /// 32 bytes from the system's CSPRNG (`getrandom`): never reused, never predictable.
    private static func nonce() -> Hash256 {
        var random = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: Hash256.byteCount)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        guard let nonce = Hash256(bytes: bytes) else { preconditionFailure("32 bytes are a Hash256") }
        return nonce
    }

    /// Makes each proof from our own bytes, in one trip off the pool, and compares.
    private func judge(_ claims: [(asset: Asset, claimed: Hash256, nonce: Hash256, at: Date?)]) async -> [HoldingAnswer] {
        guard !claims.isEmpty else { return [] }
        let holder = session.peer.deviceID
        return await disk.run {
            claims.map { claim -> HoldingAnswer in
                guard let library = claim.asset.library else { return .unprovable("the asset was not scanned from a library") }
                switch HoldingProof.compute(for: claim.asset, in: library, nonce: claim.nonce, holder: holder) {
                case let .proof(expected):
                    return expected == claim.claimed ? .heldVerified(at: claim.at, proven: true) : .proofFailed
                case let .damaged(path):
                    return .unprovable("\(path) changed here since it was scanned")
                case let .unreadable(path, reason):
                    return .unprovable("cannot read \(path): \(reason)")
                }
            }
        }
    }
}
