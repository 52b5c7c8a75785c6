import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem
import LFSyncWire
import Synchronization

/// Answers trusted devices' holding checks from one library: per content asked about,
/// whether it is here now (from a scan with the cache, so unchanged files are not read),
/// and with a challenge, the proof made by reading its bytes again, each chunk checked
/// against its hash on the way (`HoldingProof`). Says nothing of contents nobody named.
///
/// A large question comes as many checks of 1 024 contents in a row: one scan serves them
/// for `scanReuse`, and every file of each asset asked about is `lstat`ed again at its
/// answer, so a file changed or gone since that scan is never answered "held".
final class HoldingResponder: Sendable {
    private let library: URL
    private let assets: @Sendable () async -> [Asset]
    private let store: SyncStateStore
    /// This device: every proof it makes names it (`HoldingProof`).
    private let holder: DeviceID
    /// Proofs read whole files: off the cooperative pool.
    private let disk = BlockingQueue(label: "lfsync.holdings")
    /// Assets proven per trip off the pool: between two, an answer nobody waits for any more
    /// (the connection ended, its task cancelled) stops.
    static let proofSlice = 16
    /// How long one scan answers the checks that follow it.
    static let scanReuse: Duration = .seconds(30)
    private let lastScan = Mutex<(at: ContinuousClock.Instant, byContent: [ContentID: [Asset]])?>(nil)

    init(library: URL, assets: @escaping @Sendable () async -> [Asset], store: SyncStateStore, holder: DeviceID) {
        self.library = library
        self.holder = holder
        self.assets = assets
        self.store = store
    }

    func answers(to check: WireMessage.HoldingCheck) async -> [WireMessage.HoldingReport.Answer] {
        let byContent = await currentAssets()
        let asked = check.contents
        let history = (try? await store.read { store throws(SQLiteError) in
            (synced: try store.lastSynced(of: asked), offloaded: try store.offloadedContents(among: asked))
        }) ?? (synced: [:], offloaded: [])
        var answers: [WireMessage.HoldingReport.Answer] = []
        answers.reserveCapacity(asked.count)
        /// Contents to prove: their answer's index, nonce and the placements still as scanned.
        var toProve: [(index: Int, nonce: Hash256, placements: [Asset])] = []
        for (index, content) in asked.enumerated() {
            guard let placements = byContent[content] else {
                // Had it (confirmed here or there) and it is not here now, unless it was offloaded on purpose.
                answers.append(history.synced[content] != nil && !history.offloaded.contains(content) ? .heldChanged : .notHeld)
                continue
            }
            // A copy still as scanned; a content at several places is held if one of them is.
            let unchanged = placements.filter(unchangedSinceScan)
            guard !unchanged.isEmpty else {
                answers.append(.heldChanged)
                continue
            }
            guard check.wantsProof else {
                let verified = history.synced[content].map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? 0
                answers.append(.heldVerified(verifiedAt: verified, proof: nil))
                continue
            }
            answers.append(.heldChanged)  // until its proof is made below
            toProve.append((index, check.nonces[index], unchanged))
        }
        guard !toProve.isEmpty else { return answers }
        // Every byte of every asset is read, off the pool, a slice at a time.
        let library = library, holder = holder
        var proofs: [Hash256?] = []
        for start in stride(from: 0, to: toProve.count, by: Self.proofSlice) where !Task.isCancelled {
            let slice = Array(toProve[start..<min(start + Self.proofSlice, toProve.count)])
            proofs += await disk.run {
                slice.map { item -> Hash256? in
                    for asset in item.placements {
                        if case let .proof(proof) = HoldingProof.compute(for: asset, in: library, nonce: item.nonce, holder: holder) { return proof }
                    }
                    return nil
                }
            }
        }
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        for (item, proof) in zip(toProve, proofs) {
            // No placement gave a proof: each is damaged or unreadable, so the answer stays "changed".
            if let proof { answers[item.index] = .heldVerified(verifiedAt: now, proof: proof) }
        }
        return answers
    }

    /// The library's assets by content (each of its placements), from a scan at most `scanReuse` old.
    private func currentAssets() async -> [ContentID: [Asset]] {
        let now = ContinuousClock.now
        if let recent = lastScan.withLock({ $0 }), now - recent.at < Self.scanReuse { return recent.byContent }
        var byContent: [ContentID: [Asset]] = [:]
        for asset in await assets() { byContent[asset.contentID, default: []].append(asset) }
        let scanned = byContent
        lastScan.withLock { $0 = (now, scanned) }
        return scanned
    }

    /// Every file of `asset` still has the size and modification time the scan saw.
    private func unchangedSinceScan(_ asset: Asset) -> Bool {
        asset.files.allSatisfy { file in
            let path = library.appendingPathComponent(file.manifest.path.string).path
            guard let status = try? FileStatus.of(path: path) else { return false }
            return status.kind == .regular && status.size == file.manifest.size && status.modificationTimeNs == file.manifest.modificationTimeNs
        }
    }
}
