/// What one send puts on the wire, prepared once for every peer: the assets
/// grouped by content (each content once, with all its placements), cut into
/// offers, each with the offer ID it has on every connection.
struct OutgoingPush: Sendable {
    struct Batch: Sendable {
        let offerID: UInt64
        let assets: [PlacedAsset]
    }

    /// Never empty: a push with nothing to send is one empty offer, so the
    /// receiver (and a peer that asked with Pull) sees where it ends.
    let batches: [Batch]
    /// Contents that cannot be offered at all, with the reason.
    let unofferable: [(asset: PlacedAsset, reason: String)]
    /// Distinct contents in the push, offerable or not.
    let contentCount: Int
    /// Contents cut into parts over several offers (thousands of placements), with their
    /// number of parts; every other content is in exactly one offer.
    let splitContents: [ContentID: Int]
    /// For the first offer's push header.
    let fileCount: UInt64
    let byteCount: UInt64

    var pushID: UInt64 { batches[0].offerID }

    /// Groups `assets` by content and cuts them into batches; `nextOfferID`
    /// hands out one ID per batch.
    init(assets: [Asset], batcher: OfferBatcher = OfferBatcher(), nextOfferID: () -> UInt64) {
        let placed = PlacedAsset.grouping(assets)
        let cut = batcher.batches(of: placed)
        var batches = cut.batches.map { Batch(offerID: nextOfferID(), assets: $0) }
        if batches.isEmpty { batches = [Batch(offerID: nextOfferID(), assets: [])] }
        self.batches = batches
        unofferable = cut.unofferable
        contentCount = Set(placed.map(\.contentID)).count
        var parts: [ContentID: Int] = [:]
        for batch in cut.batches {
            for asset in batch where asset.placements.count > 1 { parts[asset.contentID, default: 0] += 1 }
        }
        splitContents = parts.filter { $0.value > 1 }
        fileCount = placed.reduce(0) { $0 + UInt64($1.placedFileCount) }
        byteCount = placed.reduce(0) { $0 + $1.placedSize }
    }

    /// The offer of batch `index`, with the push header every offer carries.
    func offer(_ index: Int) -> WireMessage.Offer {
        WireMessage.Offer(
            offerID: batches[index].offerID,
            push: WireMessage.PushHeader(pushID: pushID, isLast: index == batches.count - 1, fileCount: fileCount, byteCount: byteCount),
            assets: batches[index].assets)
    }

    /// Every chunk of batch `index`, one key per content file (not per placement).
    func chunkKeys(ofBatch index: Int) -> [BroadcastChunkReader.Key] {
        batches[index].assets.flatMap { asset in
            asset.files.enumerated().flatMap { fileIndex, file in
                file.manifest.chunks.indices.map { .init(contentID: asset.contentID, fileIndex: fileIndex, chunkIndex: $0) }
            }
        }
    }
}
