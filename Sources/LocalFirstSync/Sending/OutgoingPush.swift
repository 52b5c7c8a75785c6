import Synchronization
import LFSyncContent
import LFSyncSystem
import LFSyncWire

/// What one send puts on the wire, prepared once for every peer: the assets
/// grouped by content (each content once per offer, with all its
/// placements), cut into offers, each with the offer ID it has on every
/// connection.
///
/// A push is *fed*. A streaming scan appends each segment of the library as
/// soon as it is hashed, and every peer's `PeerSendJob` takes the offers as
/// they come: the first folders are offered and sent while the last are still
/// being read, so a first push costs about the longer of hashing and sending,
/// not their sum. A push of assets already in hand is appended whole and
/// finished at once.
///
/// An offer says whether it is the push's last, so offer `i` is ready only
/// once offer `i + 1` exists or the feed has finished (`ready(_:)`).
///
/// A content can turn up in more than one offer of a push: a duplicate found
/// in a later segment, or placements too many for one offer. Its later
/// occurrences are marked `repeated`; a sender counts the content synced only
/// once every occurrence is receipted.
final class OutgoingPush: Sendable {
    struct Batch: Sendable {
        let offerID: UInt64
        let assets: [PlacedAsset]
        /// Contents an earlier offer of this push also carried.
        let repeated: Set<ContentID>
        /// Files whose manifests describe their bytes (see `SettledFiles`): those of
        /// the segment the batch was cut from, shared by its batches.
        let settled: SettledFiles
    }

    private struct State: Sendable {
        /// Nil once every consumer has gone past it: a push of 200,000 files
        /// holds only the offers in flight, not the whole library's manifests.
        var batches: [Batch?] = []
        var pushID: UInt64?
        var finished = false
        /// Per consumer (a peer's send job), the first batch it still needs.
        var cursors: [Int] = []
        /// Batches `0 ..< released` are dropped.
        var released = 0
        /// Files and bytes for every offer's push header, known once the scan has walked.
        var fileCount: UInt64 = 0
        var byteCount: UInt64 = 0
        /// Every content offered so far, to mark repeats.
        var seen = Set<ContentID>()
        var unofferable: [(asset: PlacedAsset, reason: String)] = []
        /// Why the feed ended early (the scan failed), if it did.
        var failure: String?

        mutating func append(_ batch: Batch) {
            if pushID == nil { pushID = batch.offerID }
            batches.append(batch)
            dropPassed()
        }

        /// Drops the batches every consumer has gone past — also one fed after
        /// every consumer is done, which nobody will read and which must not
        /// count against the feed's bound.
        mutating func dropPassed() {
            let keep = min(cursors.min() ?? 0, batches.count)
            while released < keep {
                batches[released] = nil
                released += 1
            }
        }
    }

    /// Send jobs wait here for their next offer (`ready(_:)`).
    private let state = Monitor(State())
    private let offerIDs: OfferIDSource
    private let batcher: OfferBatcher
    /// A sync request follows the push (`LocalSync.requestSync`): a peer that keeps path
    /// versions is told so in each offer's header, and places only new files (PROTOCOL.md,
    /// "Syncing").
    let syncFollows: Bool

    init(offerIDs: OfferIDSource, batcher: OfferBatcher = OfferBatcher(), syncFollows: Bool = false) {
        self.offerIDs = offerIDs
        self.batcher = batcher
        self.syncFollows = syncFollows
    }

    /// A push of `assets` already in hand: appended whole and finished.
    convenience init(assets: [Asset], settled: SettledFiles = SettledFiles(), offerIDs: OfferIDSource, batcher: OfferBatcher = OfferBatcher(),
                     syncFollows: Bool = false) {
        self.init(offerIDs: offerIDs, batcher: batcher, syncFollows: syncFollows)
        let placed = PlacedAsset.grouping(assets)
        setTotals(files: placed.reduce(0) { $0 + UInt64($1.placedFileCount) }, bytes: placed.reduce(0) { $0 + $1.placedSize })
        append(placed, settled: settled)
        endOfAssets()
    }

    // MARK: - Feeding

    /// The counts every offer's push header carries: shown in the consent
    /// prompt, not a promise (a file may yet turn out unreadable).
    func setTotals(files: UInt64, bytes: UInt64) {
        state.withLock { state in
            state.fileCount = files
            state.byteCount = bytes
        }
    }

    /// Batches held for the slowest consumer, at most, before a feed waits:
    /// hashing outruns sending, and a scan of 200,000 files that never waited
    /// held the offers of most of the library until the peers caught up.
    /// Sixteen segments of about 1,024 files keep every peer busy. Never below
    /// 2: a peer waits for batch `i + 1` (or the feed's end) before it sends
    /// batch `i`, so a bound of 1 would stop the feed and the peer both (tried:
    /// every streaming engine test then hangs).
    static let maxHeldBatches = 16

    /// Appends a segment's assets, grouped by content within the segment,
    /// once the consumers hold fewer than `maxHeldBatches` (at once while none
    /// is registered: nothing would ever make room).
    func append(_ segment: ScanSegment) async {
        await state.wait(orIfCancelled: ()) { state in
            state.cursors.isEmpty || state.batches.count - state.released < Self.maxHeldBatches ? () : nil
        }
        append(PlacedAsset.grouping(segment.assets), settled: segment.settled)
    }

    private func append(_ placed: [PlacedAsset], settled: SettledFiles) {
        let cut = batcher.batches(of: placed)
        state.withLock { state in
            precondition(!state.finished, "append after finish")
            for assets in cut.batches {
                var repeated = Set<ContentID>()
                for asset in assets where !state.seen.insert(asset.contentID).inserted { repeated.insert(asset.contentID) }
                state.append(Batch(offerID: offerIDs.next(), assets: assets, repeated: repeated, settled: settled))
            }
            for (asset, _) in cut.unofferable { state.seen.insert(asset.contentID) }
            state.unofferable += cut.unofferable
        }
    }

    /// No more batches. A push that offered nothing still sends one empty
    /// offer, so the receiver (and a peer that asked with Pull) sees it end.
    /// - Parameter failure: why the feed ended early, if it did.
    func endOfAssets(failure: String? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            if state.batches.isEmpty {
                state.append(Batch(offerID: offerIDs.next(), assets: [], repeated: [], settled: SettledFiles()))
            }
            state.finished = true
            state.failure = failure
        }
    }

    // MARK: - Taking

    /// Registers a consumer that will take the batches from the first on;
    /// each batch is kept until every consumer has gone past it (`advance`).
    func addConsumer() -> Int {
        state.withLock { state in
            state.cursors.append(state.released)
            return state.cursors.count - 1
        }
    }

    /// Consumer `consumer` needs no batch before `index` any more (`Int.max`: none at all).
    func advance(_ consumer: Int, to index: Int) {
        state.withLock { state in
            guard consumer < state.cursors.count, index > state.cursors[consumer] else { return }
            state.cursors[consumer] = index
            state.dropPassed()
        }
    }

    /// Waits until offer `index` can be sent — the next batch exists, or the
    /// feed has finished. False when there is no batch `index`, or the
    /// waiting task was cancelled.
    func ready(_ index: Int) async -> Bool {
        await state.wait(orIfCancelled: false) { state in
            guard state.finished || index + 1 < state.batches.count else { return nil }
            return index < state.batches.count
        }
    }

    /// Whether offer `index` can be sent now (see `ready(_:)`), without waiting.
    func isReady(_ index: Int) -> Bool {
        state.withLock { index < $0.batches.count && ($0.finished || index + 1 < $0.batches.count) }
    }

    /// Batch `index`, if it exists yet.
    func batch(_ index: Int) -> Batch? {
        state.withLock { index < $0.batches.count ? $0.batches[index] : nil }
    }

    /// Batches known so far.
    var batchCount: Int { state.withLock { $0.batches.count } }

    var pushID: UInt64? { state.withLock { $0.pushID } }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Why the feed ended early, once it has.
    var failure: String? { state.withLock { $0.failure } }

    /// Distinct contents offered so far, offerable or not: the whole push's once finished.
    var contentCount: Int { state.withLock { $0.seen.count } }

    var contentIDs: [ContentID] { state.withLock { Array($0.seen) } }

    /// Contents that cannot be offered at all, with the reason.
    var unofferable: [(asset: PlacedAsset, reason: String)] { state.withLock { $0.unofferable } }

    /// The offer of batch `index`, with the push header every offer carries.
    /// Call after `ready(index)` said true.
    func offer(_ index: Int) -> WireMessage.Offer? {
        state.withLock { state in
            guard index < state.batches.count, let batch = state.batches[index], let pushID = state.pushID else { return nil }
            let header = WireMessage.PushHeader(
                pushID: pushID, isLast: state.finished && index == state.batches.count - 1,
                fileCount: state.fileCount, byteCount: state.byteCount)
            return WireMessage.Offer(offerID: batch.offerID, push: header, assets: batch.assets)
        }
    }

    /// Every chunk of batch `index`, one key per content file (not per placement).
    func chunkKeys(ofBatch index: Int) -> [BroadcastChunkReader.Key] {
        guard let batch = batch(index) else { return [] }
        return batch.assets.flatMap { asset in
            asset.files.enumerated().flatMap { fileIndex, file in
                file.manifest.chunks.indices.map { .init(contentID: asset.contentID, fileIndex: fileIndex, chunkIndex: $0) }
            }
        }
    }
}

/// Offer IDs, unique on every connection of one engine: pushes take them
/// from here as their batches are cut, on whatever thread feeds them.
final class OfferIDSource: Sendable {
    private let last = Atomic<UInt64>(0)

    func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
