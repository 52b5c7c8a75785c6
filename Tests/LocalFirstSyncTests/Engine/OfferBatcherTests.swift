import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncWire

/// How a push is cut into offers: each content once with all its placements,
/// batches within the limits, a content with more placements than one offer
/// may hold spread over several, and what cannot be offered at all named.
@Suite struct OfferBatcherTests {
    static func asset(_ path: String, chunks: Int = 1, seed: String? = nil) -> Asset {
        Asset(files: [.init(role: .primary, manifest: WireFixtures.manifest(
            path: path, chunkLengths: Array(repeating: 70_000, count: chunks), seed: seed ?? path))])
    }

    @Test func everyContentOnceWithAllItsPlacementsInBatchesWithinTheLimits() throws {
        // 300 distinct photos, each also in a Backup folder: 600 placements, 300 contents.
        var assets: [Asset] = []
        for index in 0..<300 {
            assets.append(Self.asset("Photos/\(index).jpg", chunks: index % 5 + 1, seed: "photo \(index)"))
            assets.append(Self.asset("Backup/\(index).jpg", chunks: index % 5 + 1, seed: "photo \(index)"))
        }
        let placed = PlacedAsset.grouping(assets)
        #expect(placed.count == 300)
        #expect(placed.allSatisfy { $0.placements.count == 2 })
        let batcher = OfferBatcher(targetFiles: 100, targetBytes: 1 << 30)
        let result = batcher.batches(of: placed)
        #expect(result.unofferable.isEmpty)
        #expect(result.batches.flatMap { $0 } == placed, "every content, in order, once")
        for batch in result.batches {
            #expect(batch.reduce(0) { $0 + $1.placedFileCount } <= 100)
            let frame = try WireMessage.offer(.init(offerID: 1, assets: batch)).frame()
            #expect(frame.payload.count == WireMessage.Offer.headerLength + batch.reduce(0) { $0 + $1.wireLength }, "wireLength is exact")
        }
        // The byte target closes batches too.
        let small = OfferBatcher(targetFiles: 10_000, targetBytes: 2_000).batches(of: placed)
        for batch in small.batches where batch.count > 1 {
            #expect(batch.dropLast().reduce(WireMessage.Offer.headerLength) { $0 + $1.wireLength } < 2_000)
        }
    }

    @Test func aContentWithThousandsOfPlacementsIsSpreadOverOffers() throws {
        // 2,500 empty files: one content.
        let empties = (0..<2_500).map { index in
            Asset(files: [.init(role: .primary, manifest: FileManifest(path: RelativePath("notes/\(index).txt"), contents: []))])
        }
        let placed = PlacedAsset.grouping(empties + [Self.asset("photo.jpg")])
        #expect(placed.count == 2)
        let result = OfferBatcher(targetFiles: 1_000, targetBytes: 1 << 20, maxPlacedFiles: 1_000).batches(of: placed)
        let parts = result.batches.flatMap { $0 }.filter { $0.contentID == placed[0].contentID }
        #expect(parts.count == 3)
        #expect(parts.reduce(0) { $0 + $1.placements.count } == 2_500)
        #expect(Set(parts.flatMap { $0.placements.map(\.primaryPath) }).count == 2_500, "no placement lost or repeated")
        for batch in result.batches {
            #expect(Set(batch.map(\.contentID)).count == batch.count, "a content at most once per offer")
            #expect(batch.reduce(0) { $0 + $1.placedFileCount } <= 1_000)
        }
    }

    @Test func aManifestTooLargeForAnyOfferIsNamedNotSent() {
        let huge = Self.asset("huge.mov", chunks: 100)
        let fine = Self.asset("fine.jpg")
        let result = OfferBatcher(maxPayloadLength: 2_000).batches(of: PlacedAsset.grouping([huge, fine]))
        #expect(result.batches.flatMap { $0 }.map(\.contentID) == [fine.contentID])
        #expect(result.unofferable.map(\.asset.contentID) == [huge.contentID])
        #expect(result.unofferable.first?.reason.contains("over the offer limit") == true)
    }

    @Test func groupingKeepsDifferentContentsApartAndTwinsDistinct() {
        // NFC and NFD twins with the same bytes are two placements of one content.
        let nfc = Self.asset("caf\u{E9}.jpg", seed: "same"), nfd = Self.asset("cafe\u{301}.jpg", seed: "same")
        let other = Self.asset("other.jpg", seed: "other")
        let placed = PlacedAsset.grouping([nfc, other, nfd])
        #expect(placed.map(\.placements.count) == [2, 1])
        #expect(placed[0].placements.map(\.primaryPath) == [nfc.primaryPath, nfd.primaryPath])
        #expect(PlacedAsset(placements: [nfc, other]) == nil, "placements must share their content")
        #expect(PlacedAsset(placements: []) == nil)
    }
}
