import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// Answers trusted devices' holding checks from one library: per content asked about,
/// whether it is here now (from a scan with the cache, so unchanged files are not read),
/// and with a challenge, the proof made by reading its bytes again, each chunk checked
/// against its hash on the way (`HoldingProof`). Says nothing of contents nobody named.
final class HoldingResponder: Sendable {
    private let library: URL
    private let assets: @Sendable () async -> [Asset]
    private let store: SyncStateStore
    /// This device: every proof it makes names it (`HoldingProof`).
    private let holder: DeviceID
    /// Proofs read whole files: off the cooperative pool.
    private let disk = BlockingQueue(label: "lfsync.holdings")

    init(library: URL, assets: @escaping @Sendable () async -> [Asset], store: SyncStateStore, holder: DeviceID) {
        self.library = library
        self.holder = holder
        self.assets = assets
        self.store = store
    }

    func answers(to check: WireMessage.HoldingCheck) async -> [WireMessage.HoldingReport.Answer] {
        let here = await assets()
        var byContent: [ContentID: Asset] = [:]
        for asset in here where byContent[asset.contentID] == nil { byContent[asset.contentID] = asset }
        let asked = check.contents
        let history = (try? await store.read { store throws(SQLiteError) in
            (synced: try store.lastSynced(of: asked), offloaded: try store.offloadedContents(among: asked))
        }) ?? (synced: [:], offloaded: [])
        var answers: [WireMessage.HoldingReport.Answer] = []
        answers.reserveCapacity(asked.count)
        for (index, content) in asked.enumerated() {
            guard let asset = byContent[content] else {
                // Had it (confirmed here or there) and it is not here now, unless it was offloaded on purpose.
                answers.append(history.synced[content] != nil && !history.offloaded.contains(content) ? .heldChanged : .notHeld)
                continue
            }
            guard check.wantsProof else {
                let verified = history.synced[content].map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? 0
                answers.append(.heldVerified(verifiedAt: verified, proof: nil))
                continue
            }
            let nonce = check.nonces[index], library = library, holder = holder
            let outcome = await disk.run { HoldingProof.compute(for: asset, in: library, nonce: nonce, holder: holder) }
            switch outcome {
            case let .proof(proof):
                answers.append(.heldVerified(verifiedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()), proof: proof))
            case .damaged, .unreadable:
                answers.append(.heldChanged)
            }
        }
        return answers
    }
}
