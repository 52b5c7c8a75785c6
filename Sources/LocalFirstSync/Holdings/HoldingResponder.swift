import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem
import LFSyncWire
import Synchronization

/// Answers trusted devices' holding checks from one library *as it is when it answers*: per
/// content asked about, whether it is here now (from a scan with the cache, so unchanged
/// files are not read), and with a challenge, the proof made by reading its bytes again,
/// each chunk checked against its hash on the way (`HoldingProof`). Says nothing of contents
/// nobody named.
///
/// A content is held when each of its files is here, intact, at any path: as the scan groups
/// it (an asset of that content ID), or — for a content this device received and keeps under
/// other names, such as a Live Photo stored as conflict copies — by the file hashes the
/// ledger recorded for it when it arrived (`SyncStateStore.compositions`).
///
/// A large question comes as many checks of 1 024 contents in a row: one scan serves them
/// until the library changes (`libraryChanged()`: the engine's own installs, the watcher of
/// `serve`) or for `scanReuse` at most, and every file of each placement asked about is
/// `lstat`ed again at its answer, so a file changed or gone since that scan is never
/// answered "held".
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
    /// How long one scan answers the checks that follow it, when nothing says the library
    /// changed (a change made while nothing watches it is seen at the latest then).
    static let scanReuse: Duration = .seconds(30)

    /// The last look at the library: its assets by content, and (built when first needed)
    /// its files by file hash.
    private final class Look: Sendable {
        let at: ContinuousClock.Instant
        let byContent: [ContentID: [Asset]]
        private let filesByHash = Mutex<[Hash256: [FileManifest]]?>(nil)

        init(at: ContinuousClock.Instant, byContent: [ContentID: [Asset]]) {
            self.at = at
            self.byContent = byContent
        }

        /// Every scanned file, by file hash.
        func files(withHash hash: Hash256) -> [FileManifest] {
            filesByHash.withLock { index in
                if index == nil {
                    var built: [Hash256: [FileManifest]] = [:]
                    for placements in byContent.values {
                        for asset in placements { for file in asset.files { built[file.manifest.fileHash, default: []].append(file.manifest) } }
                    }
                    index = built
                }
                return index?[hash] ?? []
            }
        }
    }

    private struct LookState {
        var look: Look?
        /// Set when the library changed after `look` was taken.
        var stale = false
    }

    private let state = Mutex(LookState())

    /// Bytes the proofs of one check may read, unless it names one content.
    private let proofByteLimit: UInt64

    init(library: URL, assets: @escaping @Sendable () async -> [Asset], store: SyncStateStore, holder: DeviceID,
         proofByteLimit: UInt64 = WireMessage.HoldingCheck.maxProofBytes) {
        self.library = library
        self.proofByteLimit = proofByteLimit
        self.holder = holder
        self.assets = assets
        self.store = store
    }

    /// The library changed: the next answer looks at it again.
    func libraryChanged() {
        state.withLock { $0.stale = true }
    }

    func answers(to check: WireMessage.HoldingCheck) async -> HoldingResponse {
        let look = await currentLook()
        let asked = check.contents
        let history = (try? await store.read { store throws(SQLiteError) in
            (synced: try store.lastSynced(of: asked), offloaded: try store.offloadedContents(among: asked))
        }) ?? (synced: [:], offloaded: [])
        // A copy still as scanned; a content at several places is held if one of them is.
        var unchanged = asked.map { content in (look.byContent[content] ?? []).filter(unchangedSinceScan) }
        // What the contents not found as assets are made of, when this device received them.
        let missing = zip(asked, unchanged).compactMap { $1.isEmpty ? $0 : nil }
        let compositions = missing.isEmpty ? [:] : ((try? await store.read { store throws(SQLiteError) in try store.compositions(of: missing) }) ?? [:])
        var answers: [WireMessage.HoldingReport.Answer] = []
        answers.reserveCapacity(asked.count)
        /// Contents to prove: their answer's index, nonce and the placements still as scanned.
        var toProve: [(index: Int, nonce: Hash256, placements: [Asset])] = []
        for (index, content) in asked.enumerated() {
            if unchanged[index].isEmpty, let files = compositions[content], let found = placement(of: files, in: look) {
                unchanged[index] = [found]
            }
            guard !unchanged[index].isEmpty else {
                // Had it (confirmed here or there) and it is not here now, unless it was offloaded on purpose.
                answers.append(history.synced[content] != nil && !history.offloaded.contains(content) ? .heldChanged : .notHeld)
                continue
            }
            guard check.wantsProof else {
                let verified = history.synced[content].map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? 0
                answers.append(.heldVerified(verifiedAt: verified, proof: nil))
                continue
            }
            answers.append(.heldChanged)  // until its proof is made below
            toProve.append((index, check.nonces[index], unchanged[index]))
        }
        guard !toProve.isEmpty else { return .answers(answers) }
        // What the proofs would read: bounded per check, but for a single content (PROTOCOL.md,
        // "Limits and deadlines").
        let bytes = toProve.reduce(UInt64(0)) { $0 &+ ($1.placements.first?.totalSize ?? 0) }
        if toProve.count > 1, bytes > proofByteLimit {
            return .overLimit("a holding check with proof of \(bytes) bytes (limit \(proofByteLimit) unless it names one content)")
        }
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
        return .answers(answers)
    }

    /// The content `files` make, put together from files of the library found by their
    /// hashes at whatever paths (each still as scanned); nil when one is not here.
    private func placement(of files: SyncStateStore.Composition, in look: Look) -> Asset? {
        var found: [Asset.File] = []
        for file in files {
            guard let manifest = look.files(withHash: file.fileHash).first(where: { unchangedSinceScan($0) }) else { return nil }
            found.append(Asset.File(role: file.role, manifest: manifest))
        }
        return Asset(files: found)
    }

    /// The library's assets by content (each of its placements), from a scan taken since the
    /// library last changed, and at most `scanReuse` ago.
    private func currentLook() async -> Look {
        let now = ContinuousClock.now
        let reusable = state.withLock { state -> Look? in
            guard let look = state.look, !state.stale, now - look.at < Self.scanReuse else { return nil }
            return look
        }
        if let reusable { return reusable }
        // Changes from here on are for the next look: this one may not see them.
        state.withLock { $0.stale = false }
        var byContent: [ContentID: [Asset]] = [:]
        for asset in await assets() { byContent[asset.contentID, default: []].append(asset) }
        let look = Look(at: now, byContent: byContent)
        state.withLock { $0.look = look }
        return look
    }

    /// Every file of `asset` still has the size and modification time the scan saw.
    private func unchangedSinceScan(_ asset: Asset) -> Bool {
        asset.files.allSatisfy { unchangedSinceScan($0.manifest) }
    }

    private func unchangedSinceScan(_ manifest: FileManifest) -> Bool {
        let path = library.appendingPathComponent(manifest.path.string).path
        guard let status = try? FileStatus.of(path: path) else { return false }
        return status.kind == .regular && status.size == manifest.size && status.modificationTimeNs == manifest.modificationTimeNs
    }
}
